/**
 * `spec.chart` and `spec.values`: an existing Helm chart as the operator's template engine.
 * Without `spec.chart` the operator builds its own Deployment/StatefulSet and Service; with it, the chart renders
 * the instance's objects from values derived from the typed spec (placed at `valuePaths`) with `spec.values`
 * merged over the chart's own values, and the operator keeps the lifecycle (apply, prune, status, finalizer).
 */
import * as z from "zod";
import { dns1123SubdomainPattern, maxDns1123SubdomainLength } from "./dns-names.ts";
import { patternMessageKey } from "./structural.ts";

/** The spec fields the operator maps into chart values, in the order the docs list them. */
export const valuePathFields = ["replicas", "imageRepository", "imageTag", "imageDigest", "port", "storage"] as const;

/** One of {@link valuePathFields}. */
export type ValuePathField = (typeof valuePathFields)[number];

/**
 * Where each typed field goes when the spec leaves its path out: the value names of `helm create`'s scaffold, so
 * most charts work without any `valuePaths`. The scaffold has no digest: `imageDigest` goes where the charts that
 * take one (Bitnami's, for example) read it, `image.digest`, so a pinned `spec.image` is never dropped silently (a
 * chart that ignores it runs another image, which the status reports as `ImageMismatch`). `storage` has no
 * conventional name and is not set unless a path is given.
 */
export const defaultValuePaths: Readonly<Record<ValuePathField, string>> = {
  replicas: "replicaCount",
  imageRepository: "image.repository",
  imageTag: "image.tag",
  imageDigest: "image.digest",
  port: "service.port",
  storage: "",
};

/** The ConfigMap key holding the packed chart, as `kubectl create configmap N --from-file=chart.tgz=...` makes it. */
export const chartConfigMapKey = "chart.tgz";

const maxReferenceLength = 512;
const valuePathPattern = "^([A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*)?$";

/**
 * Names a JavaScript object inherits rather than owns: a value path or values key spelled with one of them could
 * reach a prototype shared by the whole process (`__proto__.x` sets `x` on every object), so none is a value
 * name at any layer.
 */
export const reservedValueKeys = ["__proto__", "constructor", "prototype"] as const;

/**
 * Deepest nesting of objects and arrays in `spec.values`, the values object itself being level 1. Real Helm
 * values nest about a dozen levels (a pod spec inside a values key); the apiserver stores up to ~10,000, and
 * JavaScript's own recursive walks (`JSON.stringify`, `structuredClone`, deep equality) overflow the stack at a
 * few thousand. What reads values before they are validated walks them iteratively (null pruning, this check,
 * the operator's size measure); past this depth they are refused, so what reads them after may recurse.
 */
export const maxValuesDepth = 100;

/**
 * A value path with a reserved segment. RE2 has no lookahead, so the CRD cannot fold this into the path's
 * `pattern`; CEL's `matches` (RE2, unanchored) and JS's `test` read this same expression alike.
 */
const reservedSegmentPattern = `(^|[.])(${reservedValueKeys.join("|")})([.]|$)`;

/** True when the dotted `path` has a segment in {@link reservedValueKeys}. */
function hasReservedSegment(path: string): boolean {
  return new RegExp(reservedSegmentPattern).test(path);
}
const versionPattern = "^v?[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$";
const digestPattern = "^sha256:[a-f0-9]{64}$";
const ociPattern = "^oci://[^\\s/]+/[^\\s]+$";
const repoPattern = "^https?://[^\\s]+$";

/**
 * A chart location is fetched at the path it names: no `.` or `..` segment, and none of `? # %` nor a backslash
 * nor credentials (`@` before the path). A URL parser resolves those, so the path compared with the platform's
 * allow-list would not be the path fetched (`oci://host/org/team-a/../team-b/app` is fetched as `/org/team-b/app`).
 * One RE2 expression (CEL's `matches`, unanchored) that JS reads alike, true for a location that breaks the rule;
 * the backslash is looked for apart, since a pattern would need one and CEL strings unescape their own.
 */
const unplainLocationPattern = "[?#%]|^[a-z]+://[^/]*@|/[.][.]?(/|$)";
const unplainLocationRule = `!self.matches('${unplainLocationPattern}') && !self.contains('\\\\')`;

/** A tag or digest in an OCI location's path (`oci://host/org/app:1.2.3`): the version is spec.chart.version. */
const ociTaggedPattern = "^oci://[^/]*/.*[:@]";

/** True when `location` is fetched at the path it names (see {@link unplainLocationPattern}). */
export function isPlainLocation(location: string): boolean {
  return !new RegExp(unplainLocationPattern).test(location) && !location.includes("\\");
}

/** What each chart field allows, in words: the error text at every layer. */
export const chartRules = {
  configMap: `must be the name of a ConfigMap in the instance's namespace (a DNS subdomain, at most ${maxDns1123SubdomainLength} characters)`,
  oci: `must be an OCI chart reference oci://registry[:port]/path/chart without tag, at most ${maxReferenceLength} characters`,
  ociUntagged: "must name the chart without a tag or digest (oci://registry/path/chart): the tag is spec.chart.version",
  repo: `must be the http(s) URL of a Helm chart repository (the directory holding index.yaml), at most ${maxReferenceLength} characters`,
  plainLocation:
    "must be fetched at the path it names: no '.' or '..' segment, and no credentials, query, fragment, '%' escape or backslash",
  name: "must be the chart's name in the repository (letters, digits, '-', '_' and '.'), at most 253 characters",
  version: "must be an exact chart version (semver such as 1.2.3 or 1.2.3-rc.1), not a range",
  digest: "must be sha256:<64 lower-case hex digits>, the SHA-256 of the packed chart (.tgz)",
  valuePath:
    "must be a dotted value path such as replicaCount or image.repository (letters, digits, '_' and '-'; no segment __proto__, constructor or prototype), or empty to leave the value to the chart",
  valuesDepth: `must nest objects and arrays at most ${maxValuesDepth} levels deep`,
  valueKey:
    "is a reserved name: keys of spec.values may be any string but __proto__, constructor and prototype (JavaScript's own names, refused so values stay data)",
  imageDigestUnmapped:
    "may not be empty while spec.image has a digest: the chart would not get the digest and would run a mutable tag; " +
    "give the value path where the chart takes the digest, or leave it out for image.digest",
  oneSource: "must name exactly one source: configMap, oci or repo",
  versionNeeded: "needs spec.chart.version: charts from a registry or repository are pinned by version",
  nameNeeded: "needs spec.chart.name: the chart's name in the repository",
  // The same rules said of the missing field itself, where a message is prefixed with that field's path.
  versionRequired: "is required with oci or repo: charts from a registry or repository are pinned by version",
  nameRequired: "is required with repo: the chart's name in the repository",
  nameOnlyWithRepo: "is only used with spec.chart.repo",
} as const;

const reference = (field: "oci" | "repo", pattern: string, rule: string, description: string) => {
  // A tag in an OCI location would be fetched as part of the repository's name: refused by name, not by pattern.
  const untagged =
    field === "oci" ? [{ rule: `!self.matches('${ociTaggedPattern}')`, text: chartRules.ociUntagged }] : [];
  return z
    .string({ error: rule })
    .max(maxReferenceLength, { error: rule })
    .regex(new RegExp(pattern), { error: rule })
    .refine(isPlainLocation, { error: chartRules.plainLocation })
    .refine((location) => field !== "oci" || !new RegExp(ociTaggedPattern).test(location), {
      error: chartRules.ociUntagged,
    })
    .meta({
      description,
      "x-kubernetes-validations": [
        { rule: unplainLocationRule, message: `spec.chart.${field} ${chartRules.plainLocation}` },
        ...untagged.map(({ rule, text }) => ({ rule, message: `spec.chart.${field} ${text}` })),
      ] satisfies CelRule[],
    })
    .optional();
};

const valuePath = (field: ValuePathField, what: string) =>
  z
    .string({ error: chartRules.valuePath })
    .max(253, { error: chartRules.valuePath })
    .regex(new RegExp(valuePathPattern), { error: chartRules.valuePath })
    .refine((path) => !hasReservedSegment(path), { error: chartRules.valuePath })
    .meta({
      description:
        `Dotted value path that receives ${what}. ` +
        (defaultValuePaths[field] === ""
          ? "Not set unless given."
          : `Defaults to ${defaultValuePaths[field]}; an empty string leaves the value to the chart.`),
      "x-kubernetes-validations": [
        {
          rule: `!self.matches('${reservedSegmentPattern}')`,
          message: `spec.chart.valuePaths.${field} ${chartRules.valuePath}`,
        },
      ] satisfies CelRule[],
    })
    .optional();

/** `spec.chart.valuePaths`: where the chart expects each typed spec field. */
const valuePathsSchema = z
  .strictObject(
    {
      replicas: valuePath("replicas", "spec.replicas (a number)"),
      imageRepository: valuePath("imageRepository", "the repository of spec.image (registry and path)"),
      imageTag: valuePath("imageTag", "the tag of spec.image (latest when it has neither tag nor digest)"),
      imageDigest: valuePath("imageDigest", "the digest of spec.image (sha256:...), when it has one"),
      port: valuePath("port", "spec.port (a number)"),
      storage: valuePath("storage", "spec.storage (a quantity string), when set"),
    },
    { error: (issue) => (issue.code === "invalid_type" ? "must be an object" : undefined) },
  )
  .meta({
    description:
      "Where the chart expects the typed spec fields, as dotted value paths, so an existing chart works unchanged: " +
      "for example {replicas: replicaCount, imageRepository: image.repository, imageTag: image.tag, port: " +
      "service.httpPort}. Paths left out take the defaults of `helm create`'s scaffold.",
  });

interface CelRule {
  readonly rule: string;
  readonly message: string;
  readonly fieldPath?: string;
}

const chartObjectRules: CelRule[] = [
  {
    rule: "(has(self.configMap) ? 1 : 0) + (has(self.oci) ? 1 : 0) + (has(self.repo) ? 1 : 0) == 1",
    message: `spec.chart ${chartRules.oneSource}`,
  },
  {
    rule: "!(has(self.oci) || has(self.repo)) || has(self.version)",
    message: `spec.chart.oci or spec.chart.repo ${chartRules.versionNeeded}`,
    fieldPath: ".version",
  },
  {
    rule: "!has(self.repo) || has(self.name)",
    message: `spec.chart.repo ${chartRules.nameNeeded}`,
    fieldPath: ".name",
  },
  {
    rule: "has(self.repo) || !has(self.name)",
    message: `spec.chart.name ${chartRules.nameOnlyWithRepo}`,
    fieldPath: ".name",
  },
];

/** `spec.chart`: which Helm chart renders the instance's objects, and where the typed fields go in its values. */
export const chartSchema = z
  .strictObject(
    {
      configMap: z
        .string({ error: chartRules.configMap })
        .max(maxDns1123SubdomainLength, { error: chartRules.configMap })
        .regex(new RegExp(dns1123SubdomainPattern), { error: chartRules.configMap })
        .meta({
          description:
            `Name of a ConfigMap in the instance's namespace whose binaryData key ${chartConfigMapKey} holds the ` +
            `packed chart, as \`kubectl create configmap NAME --from-file=${chartConfigMapKey}=./chart-1.2.3.tgz\` ` +
            "makes it. Works offline. The operator does not watch the ConfigMap: for a new chart version create a " +
            "new ConfigMap and point configMap at it (an edit in place is picked up at the next resync).",
          [patternMessageKey]: `spec.chart.configMap ${chartRules.configMap}`,
        })
        .optional(),
      oci: reference(
        "oci",
        ociPattern,
        chartRules.oci,
        "Chart in an OCI registry, oci://registry[:port]/path/chart (no tag: the tag is spec.chart.version).",
      ),
      repo: reference(
        "repo",
        repoPattern,
        chartRules.repo,
        "URL of an HTTP Helm chart repository (where index.yaml is); the chart is spec.chart.name at spec.chart.version.",
      ),
      name: z
        .string({ error: chartRules.name })
        .max(253, { error: chartRules.name })
        .regex(/^[A-Za-z0-9_.-]+$/, { error: chartRules.name })
        .meta({
          description: "The chart's name in the repository; only with repo.",
          [patternMessageKey]: `spec.chart.name ${chartRules.name}`,
        })
        .optional(),
      version: z
        .string({ error: chartRules.version })
        .max(128, { error: chartRules.version })
        .regex(new RegExp(versionPattern), { error: chartRules.version })
        .meta({
          description:
            "Exact chart version; required with oci and repo, not used with configMap (the ConfigMap holds one " +
            "chart). Changing it renders the new chart version and rolls the application out.",
          [patternMessageKey]: `spec.chart.version ${chartRules.version}`,
        })
        .optional(),
      digest: z
        .string({ error: chartRules.digest })
        .regex(new RegExp(digestPattern), { error: chartRules.digest })
        .meta({
          description:
            "Pin: sha256:<hex> of the packed chart (.tgz). A chart whose bytes differ is refused (Degraded, " +
            "reason ChartDigestMismatch).",
        })
        .optional(),
      valuePaths: valuePathsSchema.optional(),
    },
    { error: (issue) => (issue.code === "invalid_type" ? "must be an object" : undefined) },
  )
  .meta({
    description:
      "Render the instance's objects with this Helm chart instead of the built-in Deployment/StatefulSet and " +
      "Service. The release name is the instance's name and the namespace its namespace; hooks and test pods are " +
      "not run. The operator still applies, prunes and tracks every rendered object.",
    "x-kubernetes-validations": chartObjectRules,
  })
  .superRefine(
    (chart, ctx) => {
      const raw: unknown = chart;
      if (typeof raw !== "object" || raw === null) return;
      const has = (key: string) => key in raw && (raw as Record<string, unknown>)[key] !== undefined;
      const sources = ["configMap", "oci", "repo"].filter(has).length;
      if (sources !== 1) ctx.addIssue({ code: "custom", path: [], message: chartRules.oneSource });
      if ((has("oci") || has("repo")) && !has("version")) {
        ctx.addIssue({ code: "custom", path: ["version"], message: chartRules.versionRequired });
      }
      if (has("repo") && !has("name"))
        ctx.addIssue({ code: "custom", path: ["name"], message: chartRules.nameRequired });
      if (!has("repo") && has("name")) {
        ctx.addIssue({ code: "custom", path: ["name"], message: chartRules.nameOnlyWithRepo });
      }
    },
    { when: () => true },
  );

/** How many reserved keys of `spec.values` a refusal names; the rest are counted. */
export const maxNamedValueKeys = 10;

/**
 * The paths (below `spec.values`) of the first `limit` keys in {@link reservedValueKeys}, at any depth, in objects
 * and in arrays' objects, in document order, and how many there are in all. Reads own keys only, so an own
 * `__proto__` (as JSON.parse and YAML make it) is seen as the data it is. Iterative, with a parent link per node
 * instead of a path: a deeply nested value cannot exhaust the stack, and a wide one costs memory in proportion to
 * its size, never to its size times its depth, nor a refusal per key (the values are the tenant's).
 */
function reservedKeyPaths(values: unknown, limit = maxNamedValueKeys): { paths: (string | number)[][]; count: number } {
  interface Node {
    readonly value: unknown;
    readonly key?: string | number;
    readonly parent?: Node;
  }
  const pathOf = (node: Node): (string | number)[] => {
    const path: (string | number)[] = [];
    for (let at: Node | undefined = node; at?.key !== undefined; at = at.parent) path.push(at.key);
    return path.reverse();
  };
  const paths: (string | number)[][] = [];
  let count = 0;
  const pending: Node[] = [{ value: values }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, key } = next;
    if (typeof key === "string" && (reservedValueKeys as readonly string[]).includes(key)) {
      if (count++ < limit) paths.push(pathOf(next));
    }
    if (typeof value !== "object" || value === null) continue;
    const children: [string | number, unknown][] = Array.isArray(value)
      ? value.map((item, index) => [index, item])
      : Object.entries(value);
    for (const [childKey, child] of children.reverse()) pending.push({ value: child, key: childKey, parent: next });
  }
  return { paths, count };
}

/**
 * True when `values` nests objects and arrays more than {@link maxValuesDepth} levels deep. Iterative, and it
 * stops at the first node too deep: the cost is bounded by the values' size, never by the stack.
 */
function valuesTooDeep(values: unknown): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value: values, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth } = next;
    if (typeof value !== "object" || value === null) continue;
    if (depth > maxValuesDepth) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      pending.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

const valuesRecord = z.record(z.string(), z.unknown(), { error: "must be an object of Helm values" });

// Typed as the record it lets through (at run time it takes anything), so users still write values as an object.
const reservedKeysRefused = z.unknown().superRefine((values, ctx) => {
  if (valuesTooDeep(values)) {
    ctx.addIssue({ code: "custom", path: [], message: chartRules.valuesDepth });
    return;
  }
  const reserved = reservedKeyPaths(values);
  for (const path of reserved.paths) ctx.addIssue({ code: "custom", path, message: chartRules.valueKey });
  if (reserved.count > reserved.paths.length) {
    const more = reserved.count - reserved.paths.length;
    const message = `has ${more} more keys named __proto__, constructor or prototype besides the ${reserved.paths.length} named`;
    ctx.addIssue({ code: "custom", path: [], message });
  }
}) as unknown as z.ZodType<Record<string, unknown>, Record<string, unknown>>;

/**
 * `spec.values`: free-form chart values, merged over the chart's own values.yaml and under the typed fields.
 * Reserved keys are refused before the record is parsed: zod's record drops a top-level `__proto__` without a
 * word, and a refusal must name it. The pipe's JSON Schema is its input side (unknown), hence `type` in the meta.
 */
export const chartValuesSchema = reservedKeysRefused.pipe(valuesRecord).meta({
  description:
    "Helm values for spec.chart, merged over the chart's values.yaml; the typed fields (replicas, image, port, " +
    "storage) are placed at spec.chart.valuePaths after it, so they win. Only used with spec.chart. Keys may " +
    `be any string but __proto__, constructor and prototype; objects and arrays nest at most ${maxValuesDepth} ` +
    "levels deep, and the platform bounds the whole (--render-values: 128 KiB of compact JSON by default).",
  type: "object",
  "x-kubernetes-preserve-unknown-fields": true,
});

/** `spec.chart` with its source and pins. */
export type ChartSpec = z.output<typeof chartSchema>;

/** `spec.chart` as a user writes it. */
export type ChartSpecInput = z.input<typeof chartSchema>;

/** `spec.chart.valuePaths`. */
export type ValuePaths = z.output<typeof valuePathsSchema>;

/** `spec.values`. */
export type ChartValues = z.output<typeof chartValuesSchema>;

/** A kind a chart may render: `apiVersion` and `kind`, as in the object, and its REST resource (for RBAC). */
export interface ChartKind {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  /**
   * The operator may create and patch these but never read them (Secrets: least privilege keeps credentials out
   * of the operator's reach), so it cannot prune them; the instance's owner reference still garbage-collects them.
   */
  readonly writeOnly?: true;
}

/**
 * Every kind charts can render (the operator's REST table knows these): those of the built-in template, plus what
 * application charts commonly carry. The platform's allow-list (`MyAppOperator` `chartKinds`, `--chart-kinds`) is
 * a subset of these, {@link defaultChartKinds} unless the platform opts into more. The operator's RBAC grants
 * exactly the allowed kinds; any other kind in a render is refused.
 */
export const renderableChartKinds: readonly ChartKind[] = [
  { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments" },
  { apiVersion: "apps/v1", kind: "StatefulSet", plural: "statefulsets" },
  { apiVersion: "v1", kind: "Service", plural: "services" },
  { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps" },
  { apiVersion: "v1", kind: "Secret", plural: "secrets", writeOnly: true },
  { apiVersion: "v1", kind: "ServiceAccount", plural: "serviceaccounts" },
  { apiVersion: "networking.k8s.io/v1", kind: "Ingress", plural: "ingresses" },
  { apiVersion: "policy/v1", kind: "PodDisruptionBudget", plural: "poddisruptionbudgets" },
  { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", plural: "horizontalpodautoscalers" },
];

/**
 * The allow-list when the platform names none: the kinds the built-in template writes (operator/desired/), which
 * the operator's RBAC grants anyway. A chart that renders anything else (a ConfigMap, Secret, ServiceAccount,
 * Ingress, ...) is refused until the platform opts into that kind, so a platform that never uses charts grants no
 * write on credentials, configuration or routing.
 */
export const defaultChartKinds: readonly ChartKind[] = renderableChartKinds.filter(
  (kind) =>
    (kind.apiVersion === "apps/v1" && (kind.kind === "Deployment" || kind.kind === "StatefulSet")) ||
    (kind.apiVersion === "v1" && kind.kind === "Service"),
);

/** `apps/v1/Deployment`, how flags and messages write a kind. */
export function chartKindName(kind: { readonly apiVersion: string; readonly kind: string }): string {
  return `${kind.apiVersion}/${kind.kind}`;
}

/**
 * The kinds named `apps/v1/Deployment`, ... (a subset of {@link renderableChartKinds}), or the names that are not
 * kinds charts can render.
 */
export function parseChartKinds(
  names: readonly string[],
): { ok: true; kinds: ChartKind[] } | { ok: false; unknown: string[] } {
  const unknown = names.filter((name) => !renderableChartKinds.some((kind) => chartKindName(kind) === name));
  if (unknown.length > 0) return { ok: false, unknown };
  return { ok: true, kinds: renderableChartKinds.filter((kind) => names.includes(chartKindName(kind))) };
}
