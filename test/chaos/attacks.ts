/**
 * The hostile-tenant suite's attack corpus (test/chaos/hostile-tenants.ts): what a tenant who may only create
 * MyAppInstances (and ConfigMaps, Secrets, ServiceAccounts) in their own namespace can throw at the shared
 * operator, each with the verdict the platform must give it:
 * - refused at admission (the apiserver's message names the field), or
 * - a Degraded (or Stalled) condition whose reason names the cause, or
 * - served without harm (a chart whose values merely look hostile).
 *
 * Attacks are grouped by tenant; each tenant gets a namespace of its own. Charts are packed here (a tar.gz
 * written by hand, so a decompression bomb needs no 300 MB on disk), not with helm.
 */
import { once } from "node:events";
import { createGzip } from "node:zlib";
import { ConflictError, type KubeClient } from "../../kube/index.ts";
import type { HostileServer } from "../support/hostile-servers.ts";

/** What the platform must answer an attack with. */
export type Verdict =
  /** The create is refused by the apiserver (CRD schema or CEL rule); its message matches. */
  | { readonly refused: RegExp }
  /** The instance gets condition `condition` = True with this reason (and a message that matches). */
  | { readonly condition: "Degraded" | "Stalled"; readonly reason: string; readonly message?: RegExp }
  /** The instance is served: Ready at its generation, nothing refused. */
  | { readonly served: true };

/** The local servers attacks point at. */
export interface AttackServers {
  /**
   * Must never be contacted: outside the platform's allow-list, but for `platformOnlySource`, which the platform
   * allows and the only tenant naming it is narrowed away from.
   */
  readonly counting: HostileServer;
  /** Allow-listed (the platform trusted it), then it turned hostile: one byte per second. */
  readonly slow: HostileServer;
  /** Allow-listed, then hostile: an index.yaml of 200 MB; under /flood/ one of 16 MiB listing millions of versions. */
  readonly huge: HostileServer;
  /** Allow-listed, then hostile: redirects every request to the link-local metadata address. */
  readonly redirecting: HostileServer;
}

export interface AttackContext {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly servers: AttackServers;
}

export interface Attack {
  /** The instance's name, unique in the corpus. */
  readonly name: string;
  /** The tenant (namespace) the attack comes from. */
  readonly tenant: "proto" | "charts" | "sources" | "narrowed" | "pods" | "objects";
  /** One line: what the attacker tries. */
  readonly what: string;
  readonly verdict: Verdict;
  /** What the attack needs besides the instance: chart ConfigMaps, a Secret to take over, a ServiceAccount. */
  readonly setup?: (context: AttackContext) => Promise<void>;
  /**
   * The instance's spec as JSON text, so keys such as `__proto__` stay own keys on the wire (an object literal
   * would set a prototype instead).
   */
  readonly spec: (context: AttackContext) => string;
}

/** Image of every hostile instance (pulled already by the well-behaved fleet). */
export const hostileImage = "nginx:1.27";

// ---- charts ----

/** A file of a chart: its text, or `size` zero bytes (compressed to almost nothing). */
export type ChartFile = string | { readonly zeros: number };

/**
 * A packed chart (.tgz) named `name` with `files` (paths below the chart's directory; Chart.yaml added), as
 * `helm package` lays it out: every entry under `name/`.
 */
export async function packFiles(name: string, files: Readonly<Record<string, ChartFile>>): Promise<Buffer> {
  const all: Record<string, ChartFile> = {
    "Chart.yaml": `apiVersion: v2\nname: ${name}\nversion: 0.1.0\nappVersion: "1.27"\n`,
    ...files,
  };
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on("data", (chunk: Buffer) => out.push(chunk));
  const write = async (bytes: Buffer) => {
    if (!gzip.write(bytes)) await once(gzip, "drain");
  };
  for (const [file, content] of Object.entries(all)) {
    const size = typeof content === "string" ? Buffer.byteLength(content) : content.zeros;
    await write(tarHeader(`${name}/${file}`, size));
    if (typeof content === "string") await write(Buffer.from(content));
    else {
      const chunk = Buffer.alloc(1024 * 1024);
      for (let left = size; left > 0; left -= chunk.length)
        await write(left >= chunk.length ? chunk : chunk.subarray(0, left));
    }
    const padding = (512 - (size % 512)) % 512;
    if (padding > 0) await write(Buffer.alloc(padding));
  }
  await write(Buffer.alloc(1024)); // two empty blocks end the archive
  gzip.end();
  await once(gzip, "end");
  return Buffer.concat(out);
}

/** A ustar header for a regular file. */
function tarHeader(path: string, size: number): Buffer {
  const header = Buffer.alloc(512);
  const field = (offset: number, length: number, value: string) => header.write(value, offset, length, "ascii");
  const octal = (value: number, length: number) => value.toString(8).padStart(length - 1, "0") + "\0";
  field(0, 100, path);
  field(100, 8, octal(0o644, 8));
  field(108, 8, octal(0, 8));
  field(116, 8, octal(0, 8));
  field(124, 12, octal(size, 12));
  field(136, 12, octal(Math.floor(Date.now() / 1000), 12));
  field(148, 8, "        "); // the checksum counts its own field as spaces
  field(156, 1, "0");
  field(257, 6, "ustar\0");
  field(263, 2, "00");
  const sum = header.reduce((total, byte) => total + byte, 0);
  field(148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return header;
}

/** Puts a packed chart into a ConfigMap, as `kubectl create configmap NAME --from-file=chart.tgz=...` would. */
export async function chartConfigMap(client: KubeClient, namespace: string, name: string, chart: Buffer) {
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
    binaryData: { "chart.tgz": chart.toString("base64") },
  });
}

/**
 * A Deployment template of the release's name, with more pod-spec and container fields (YAML, one per line), and a
 * sidecar before the app's container when `sidecarImage` is given.
 */
function deployment(pod: readonly string[] = [], container: readonly string[] = [], sidecarImage?: string): string {
  return [
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    "  name: {{ .Release.Name }}",
    "spec:",
    "  replicas: {{ .Values.replicaCount | default 1 }}",
    "  selector:",
    "    matchLabels: { app: {{ .Release.Name | quote }} }",
    "  template:",
    "    metadata:",
    "      labels: { app: {{ .Release.Name | quote }} }",
    "    spec:",
    ...pod.map((line) => `      ${line}`),
    "      containers:",
    ...(sidecarImage ? ["        - name: sidecar", `          image: ${sidecarImage}`] : []),
    "        - name: app",
    '          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"',
    ...container.map((line) => `          ${line}`),
    "",
  ].join("\n");
}

const values = 'replicaCount: 1\nimage:\n  repository: nginx\n  tag: "1.27"\n';

/** Creates ConfigMap `chart` holding a chart of these templates (plus values.yaml, unless given). */
function withChart(templates: Readonly<Record<string, ChartFile>>) {
  return async ({ client, namespace }: AttackContext, name: string) => {
    const files: Record<string, ChartFile> = { "values.yaml": values };
    // values.yaml, values.schema.json and paths with a directory stay where they are; a bare file name is a template.
    for (const [file, content] of Object.entries(templates)) {
      const atRoot = file === "values.yaml" || file === "values.schema.json" || file.includes("/");
      files[atRoot ? file : `templates/${file}`] = content;
    }
    await chartConfigMap(client, namespace, `${name}-chart`, await packFiles(name, files));
  };
}

/** A chart instance on ConfigMap `<name>-chart`, at pod security level `level`. */
const chartSpec = (name: string, level: "Baseline" | "Restricted" = "Baseline") =>
  `{"image":"${hostileImage}","replicas":1,"podSecurityLevel":"${level}","chart":{"configMap":"${name}-chart"}}`;

/** A chart instance on a remote source (repository `repo`, or an `oci://` reference). */
const remoteSpec = (source: { repo: string } | { oci: string }) =>
  JSON.stringify({
    image: hostileImage,
    chart: { ...source, ...("repo" in source ? { name: "app" } : {}), version: "1.0.0" },
  });

const chartAttack = (
  name: string,
  tenant: Attack["tenant"],
  what: string,
  verdict: Verdict,
  templates: Readonly<Record<string, ChartFile>>,
  more: { level?: "Baseline" | "Restricted"; setup?: (context: AttackContext) => Promise<void> } = {},
): Attack => ({
  name,
  tenant,
  what,
  verdict,
  setup: async (context) => {
    await more.setup?.(context);
    await withChart(templates)(context, name);
  },
  spec: () => chartSpec(name, more.level),
});

// ---- the corpus ----

const adminMessage = (field: string) =>
  new RegExp(`${field.replaceAll(".", "\\.")}.*(__proto__|constructor|prototype)`, "s");

/** The platform's webhook on a chart source outside `--chart-sources` (the operator's own words, at the door). */
const notAllowedSource = /admission webhook "[^"]+" denied the request: .*is not an allowed chart source/s;

/**
 * A repository prefix on the counting server that the platform's `--chart-sources` allows, and which the
 * "narrowed" tenant's namespace leaves out (`tenantChartSources`): naming it must still reach no one.
 */
export const platformOnlySource = (servers: AttackServers) => `${servers.counting.url}platform-only/`;

/**
 * The Namespace annotation myapp.example.com/chart-sources the platform owner sets on a tenant's namespace
 * (tenants cannot write Namespaces): the "narrowed" tenant may use one folder below `platformOnlySource`.
 */
export const tenantChartSources = (servers: AttackServers): Partial<Record<Attack["tenant"], string>> => ({
  narrowed: `${platformOnlySource(servers)}narrowed/`,
});

/** The platform's webhook on a platform-allowed source its namespace's annotation leaves out. */
const narrowedAwaySource =
  /admission webhook "[^"]+" denied the request: .*platform-only\/ is not an allowed chart source in namespace .*myapp\.example\.com\/chart-sources allows http:\/\/127\.0\.0\.1:\d+\/platform-only\/narrowed\/,/s;

/** Every attack of the suite, each once. */
export const attacks: readonly Attack[] = [
  // Prototype pollution: refused by the apiserver before the operator sees it.
  {
    name: "proto-path",
    tenant: "proto",
    what: 'spec.chart.valuePaths.imageTag: "__proto__.deletionTimestamp" (every object would "have" one)',
    verdict: { refused: adminMessage("valuePaths.imageTag") },
    setup: (context) => withChart({ "deployment.yaml": deployment() })(context, "proto-path"),
    spec: () =>
      `{"image":"${hostileImage}","chart":{"configMap":"proto-path-chart","valuePaths":{"imageTag":"__proto__.deletionTimestamp"}}}`,
  },
  {
    name: "proto-constructor-path",
    tenant: "proto",
    what: 'spec.chart.valuePaths.replicas: "constructor.prototype.requeueAfterMs" (a hot loop for the fleet)',
    verdict: { refused: adminMessage("valuePaths.replicas") },
    spec: () =>
      `{"image":"${hostileImage}","chart":{"configMap":"proto-path-chart","valuePaths":{"replicas":"constructor.prototype.requeueAfterMs"}}}`,
  },
  {
    name: "proto-values",
    tenant: "proto",
    what: "spec.values with an own __proto__ key (and a nested constructor.prototype)",
    // The CRD cannot check keys at any depth of a free-form field (CEL has no recursion): the platform's webhook
    // runs the operator's zod at the door (without webhooks, the operator says InvalidSpec).
    verdict: { refused: adminMessage("spec.values") },
    spec: () =>
      `{"image":"${hostileImage}","chart":{"configMap":"proto-path-chart"},` +
      `"values":{"__proto__":{"deletionTimestamp":"2020-01-01T00:00:00Z"},"app":{"constructor":{"prototype":{"x":1}}}}}`,
  },
  {
    name: "huge-values",
    tenant: "proto",
    what: "spec.values of 1 MiB (etcd takes ~1.5 MiB; the operator would cache every instance's whole)",
    // No schema bounds a free-form field's size and CEL cannot measure it: the platform's webhook does.
    verdict: { refused: /spec\.values: is 1024 KiB as JSON; the platform allows at most 128 KiB \(--render-values\)/ },
    spec: () =>
      JSON.stringify({
        image: hostileImage,
        chart: { configMap: "proto-path-chart" },
        values: { blob: "x".repeat(1024 * 1024 - 11) },
      }),
  },
  {
    name: "reserved-key-flood",
    tenant: "proto",
    what: "spec.values repeating a reserved key 150,000 times (2.7 MB: one refusal per key was ~260 MB a review)",
    // Refused for its size before any key is read; fewer keys than the size allows get ten named and a count.
    verdict: {
      refused: /spec\.values: is 2636\.8 KiB as JSON; the platform allows at most 128 KiB \(--render-values\)/,
    },
    spec: () =>
      JSON.stringify({
        image: hostileImage,
        chart: { configMap: "proto-path-chart" },
        values: { a: Array.from({ length: 150_000 }, () => JSON.parse('{"constructor":1}') as unknown) },
      }),
  },
  {
    name: "deep-values",
    tenant: "proto",
    what: "spec.values nested 9,000 objects deep (JavaScript's recursive walks overflow the stack at a few thousand)",
    // The apiserver stores up to ~10,000 levels; the operator's zod, which the webhook runs, allows 100.
    verdict: { refused: /spec\.values: must nest objects and arrays at most 100 levels deep/ },
    spec: () => `{"image":"${hostileImage}","values":${'{"a":'.repeat(9000)}1${"}".repeat(9000)}}`,
  },
  chartAttack(
    "proto-chart-values",
    "proto",
    "a ConfigMap chart whose values.yaml has __proto__ and constructor keys, rendered into a ConfigMap's data",
    { served: true },
    {
      "values.yaml":
        values +
        '__proto__:\n  deletionTimestamp: "2020-01-01T00:00:00Z"\n  requeueAfterMs: 1\nconstructor:\n  prototype:\n    finalizers: []\n',
      "deployment.yaml": deployment(),
      "configmap.yaml": [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: {{ .Release.Name }}-values",
        "data:",
        '  __proto__: {{ index .Values "__proto__" "deletionTimestamp" | quote }}',
        '  constructor: {{ index .Values "constructor" "prototype" | toJson | quote }}',
        "",
      ].join("\n"),
    },
  ),

  // Charts that would take the operator's memory, CPU or scratch space.
  chartAttack(
    "endless-loop",
    "charts",
    "a template with {{ range until 100000000 }} (an 800 MB slice, then 10^8 iterations)",
    { condition: "Degraded", reason: "ChartRenderLimit" },
    { "deployment.yaml": deployment(), "loop.yaml": "{{- range until 100000000 }}{{- end }}\n" },
  ),
  chartAttack(
    "cpu-loop",
    "charts",
    "a template looping 10^10 times without allocating much (CPU time)",
    { condition: "Degraded", reason: "ChartRenderLimit" },
    {
      "deployment.yaml": deployment(),
      "loop.yaml": "{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n",
    },
  ),
  chartAttack(
    "huge-output",
    "charts",
    "a chart whose render is 24 MiB (a 4 MiB file included six times)",
    { condition: "Degraded", reason: "ChartRenderLimit", message: /MiB/ },
    {
      "deployment.yaml": deployment(),
      "files/blob.txt": "a".repeat(4 * 1024 * 1024),
      "big.yaml": [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: {{ .Release.Name }}-big",
        "data:",
        ...[1, 2, 3, 4, 5, 6].map((i) => `  part${i}: {{ .Files.Get "files/blob.txt" | quote }}`),
        "",
      ].join("\n"),
    },
  ),
  chartAttack(
    "many-objects",
    "charts",
    "a chart that renders 600 ConfigMaps (30 KiB): 600 writes, watches and prunes for the operator",
    { condition: "Degraded", reason: "ChartRenderLimit", message: /--render-objects/ },
    {
      "deployment.yaml": deployment(),
      "many.yaml":
        "{{- range $i := until 600 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n" +
        "  name: {{ $.Release.Name }}-{{ $i }}\n{{- end }}\n",
    },
  ),
  chartAttack(
    "wide-map",
    "charts",
    "a ConfigMap of 40,000 keys (470 KiB): a pairwise duplicate-key check held the operator for seconds",
    { served: true },
    {
      "deployment.yaml": deployment(),
      "wide.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-wide\ndata:\n" +
        "{{- range $i := until 40000 }}\n  k{{ $i }}: v{{- end }}\n",
    },
  ),
  chartAttack(
    "loud-failure",
    "charts",
    "a chart whose fail message is 40,000 characters, more than a status may hold",
    { condition: "Degraded", reason: "ChartRenderFailed", message: /more characters\)$/ },
    { "deployment.yaml": deployment(), "fail.yaml": '{{ fail (repeat 40000 "x") }}\n' },
  ),
  chartAttack(
    "long-image",
    "charts",
    "a workload whose first container's image is 2,000 characters, more than status.image may hold",
    { served: true },
    { "deployment.yaml": deployment([], [], `registry.example.com/${"a".repeat(2000)}:1`) },
  ),
  chartAttack(
    "unreadable-claim-size",
    "charts",
    "a StatefulSet claiming 1e1000 bytes, a quantity the apiserver reads as 0: no budget would count it",
    { condition: "Degraded", reason: "ChartClaimSizeNotAllowed", message: /"1e1000"/ },
    {
      "statefulset.yaml":
        deployment().replace("kind: Deployment", "kind: StatefulSet") +
        "  volumeClaimTemplates:\n    - metadata: { name: data }\n" +
        '      spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: "1e1000" } } }\n',
    },
  ),
  chartAttack(
    "zip-bomb",
    "charts",
    "a 300 KB chart that unpacks to 300 MB (one file of zeros)",
    // Refused before helm runs, as helm's own loader would (a chart over 100 MiB unpacked), with the cause helm 4
    // leaves out ("unable to load chart archive"): the operator reads the archive first for its schemas.
    { condition: "Degraded", reason: "ChartRenderFailed", message: /unpacks to more than 100 MiB/ },
    { "deployment.yaml": deployment(), "files/zeros.bin": { zeros: 300 * 1024 * 1024 } },
  ),
  chartAttack(
    "alias-expansion",
    "charts",
    "a 1 MiB string and 450 YAML aliases of it in a crds/ file (copied into helm's output unparsed) posing as a " +
      "template: 450 MiB once written out as JSON, which ran the operator out of heap",
    { condition: "Degraded", reason: "ChartRenderFailed", message: /aliases expand it to more than 3\.0 MiB/ },
    {
      "deployment.yaml": deployment(),
      "crds/aliases.yaml":
        "---\n# Source: alias-expansion/templates/aliases.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n" +
        `  name: aliases\ndata:\n  a: &a "${"x".repeat(1024 * 1024)}"\n  b: [${Array(450).fill("*a").join(", ")}]\n`,
    },
  ),
  chartAttack(
    "flow-items",
    "charts",
    "1.4 million YAML flow items (2.8 MiB) in a crds/ file posing as a template: ~230 MiB and a second or more of " +
      "js-yaml, which held the event loop every tenant is served from; refused unread for its separators",
    { condition: "Degraded", reason: "ChartRenderFailed", message: /commas, line breaks and opening brackets/ },
    {
      "deployment.yaml": deployment(),
      "crds/items.yaml":
        "---\n# Source: flow-items/templates/items.yaml\napiVersion: v1\nkind: List\nmetadata:\n  name: items\n" +
        `items: [${"1,".repeat(1_400_000)}1]\n`,
    },
  ),
  {
    name: "schema-fetch",
    tenant: "charts",
    what: "a values.schema.json whose $ref names a server on the operator's loopback (helm would GET it)",
    verdict: { condition: "Degraded", reason: "ChartRenderFailed", message: /may refer only within itself/ },
    setup: async (context) =>
      await withChart({
        "deployment.yaml": deployment(),
        "values.schema.json": JSON.stringify({ properties: { x: { $ref: `${context.servers.counting.url}s.json` } } }),
      })(context, "schema-fetch"),
    spec: () => chartSpec("schema-fetch"),
  },

  // Chart sources: outside the allow-list (refused at the door by the platform's webhook, never contacted), or
  // allow-listed and hostile.
  {
    name: "metadata-url",
    tenant: "sources",
    what: "repo: http://169.254.169.254/ (a cloud's metadata endpoint)",
    verdict: { refused: notAllowedSource },
    spec: () => remoteSpec({ repo: "http://169.254.169.254/latest/meta-data/" }),
  },
  {
    name: "internal-repo",
    tenant: "sources",
    what: "repo: a server on the operator's loopback, outside the allow-list",
    verdict: { refused: notAllowedSource },
    spec: ({ servers }) => remoteSpec({ repo: servers.counting.url }),
  },
  {
    name: "internal-oci",
    tenant: "sources",
    what: "oci:// a registry on the operator's loopback, outside the allow-list",
    verdict: { refused: notAllowedSource },
    spec: ({ servers }) => remoteSpec({ oci: `oci://${servers.counting.host}/charts/app` }),
  },
  {
    name: "narrowed-away",
    tenant: "narrowed",
    what: "a repository the platform allows, from a namespace whose chart-sources annotation leaves it out",
    verdict: { refused: narrowedAwaySource },
    spec: ({ servers }) => remoteSpec({ repo: platformOnlySource(servers) }),
  },
  {
    name: "dot-dot-source",
    tenant: "narrowed",
    what: "a repository inside the namespace's annotation that climbs out of it with `..` to the platform-only folder",
    // Compared as written, fetched as resolved: the apiserver refuses the location before any list is read.
    verdict: { refused: /spec\.chart\.repo must be fetched at the path it names: no '\.' or '\.\.' segment/ },
    spec: ({ servers }) => remoteSpec({ repo: `${platformOnlySource(servers)}narrowed/../` }),
  },
  ...(["a", "b"] as const).map((which): Attack => ({
    name: `slow-drip-${which}`,
    tenant: "sources",
    what: "an allow-listed repository that sends one byte per second (two of them: the default concurrency)",
    verdict: { condition: "Stalled", reason: "TransientFailure", message: /did not answer/ },
    spec: ({ servers }) => remoteSpec({ repo: servers.slow.url }),
  })),
  {
    name: "huge-index",
    tenant: "sources",
    what: "an allow-listed repository whose index.yaml is 200 MB",
    verdict: { condition: "Degraded", reason: "ChartFetchFailed", message: /limit/ },
    spec: ({ servers }) => remoteSpec({ repo: servers.huge.url }),
  },
  {
    name: "index-flood",
    tenant: "sources",
    what: "an allow-listed repository whose index.yaml, under the size cap, lists 2.4 million versions of the chart",
    verdict: { condition: "Degraded", reason: "ChartFetchFailed", message: /more than 10000 versions of app/ },
    spec: ({ servers }) => remoteSpec({ repo: new URL("flood", servers.huge.url).href }),
  },
  {
    name: "redirect-to-metadata",
    tenant: "sources",
    what: "an allow-listed repository that redirects to http://169.254.169.254/",
    verdict: { condition: "Degraded", reason: "ChartFetchFailed", message: /169\.254\.169\.254.*not reached/ },
    spec: ({ servers }) => remoteSpec({ repo: servers.redirecting.url }),
  },

  // Pods the instance's pod security level does not allow, or another identity's.
  chartAttack(
    "privileged",
    "pods",
    "a chart pod with securityContext.privileged (at the laxer Baseline level)",
    { condition: "Degraded", reason: "ChartPodSecurity", message: /privileged/ },
    { "deployment.yaml": deployment([], ["securityContext: { privileged: true }"]) },
  ),
  chartAttack(
    "host-mount",
    "pods",
    "a chart pod mounting the node's / (hostPath)",
    { condition: "Degraded", reason: "ChartPodSecurity", message: /hostPath/ },
    {
      "deployment.yaml": deployment(
        ["volumes: [{ name: root, hostPath: { path: / } }]"],
        ["volumeMounts: [{ name: root, mountPath: /host }]"],
      ),
    },
  ),
  chartAttack(
    "host-network",
    "pods",
    "a chart pod in the node's network and PID namespaces",
    { condition: "Degraded", reason: "ChartPodSecurity", message: /host(Network|PID)/ },
    { "deployment.yaml": deployment(["hostNetwork: true", "hostPID: true"]) },
  ),
  chartAttack(
    "root-restricted",
    "pods",
    "a chart pod running as root with added capabilities at the default Restricted level",
    { condition: "Degraded", reason: "ChartPodSecurity" },
    {
      "deployment.yaml": deployment(
        [],
        ["securityContext: { runAsUser: 0, capabilities: { add: [NET_ADMIN, SYS_ADMIN] } }"],
      ),
    },
    { level: "Restricted" },
  ),
  chartAttack(
    "sa-borrow",
    "pods",
    "a chart pod running as the namespace's ServiceAccount deployer (which the chart does not create)",
    { condition: "Degraded", reason: "ChartServiceAccountNotAllowed", message: /deployer/ },
    { "deployment.yaml": deployment(["serviceAccountName: deployer"]) },
    { setup: (context) => serviceAccount(context, "deployer") },
  ),
  chartAttack(
    "sa-token",
    "pods",
    "a chart Secret of type kubernetes.io/service-account-token for deployer (minting its token)",
    { condition: "Degraded", reason: "ChartSecretTypeNotAllowed" },
    {
      "deployment.yaml": deployment(),
      "secret.yaml": [
        "apiVersion: v1",
        "kind: Secret",
        "metadata:",
        "  name: {{ .Release.Name }}-token",
        "  annotations: { kubernetes.io/service-account.name: deployer }",
        "type: kubernetes.io/service-account-token",
        "",
      ].join("\n"),
    },
    { setup: (context) => serviceAccount(context, "deployer") },
  ),
  chartAttack(
    "preempt",
    "pods",
    "a chart pod at system-node-critical priority that tolerates every taint (preempting other tenants' pods)",
    { condition: "Degraded", reason: "ChartSchedulingNotAllowed", message: /priorityClassName/ },
    {
      "deployment.yaml": deployment(["priorityClassName: system-node-critical", "tolerations: [{ operator: Exists }]"]),
    },
  ),
  chartAttack(
    "ephemeral-claim",
    "pods",
    "a chart pod with an ephemeral volume of 500Ti (a claim per pod that no storage limit or budget counts)",
    { condition: "Degraded", reason: "ChartEphemeralVolumeNotAllowed", message: /ephemeral/ },
    {
      "deployment.yaml": deployment([
        "volumes: [{ name: scratch, ephemeral: { volumeClaimTemplate: { spec: { accessModes: [ReadWriteOnce], " +
          "resources: { requests: { storage: 500Ti } } } } } }]",
      ]),
    },
  ),

  // Objects that reach beyond the instance.
  chartAttack(
    "existing-volume",
    "objects",
    "a chart StatefulSet whose claim template names a PersistentVolume (binding someone's released data)",
    { condition: "Degraded", reason: "ChartClaimBindingNotAllowed", message: /volumeName/ },
    {
      "statefulset.yaml": [
        "apiVersion: apps/v1",
        "kind: StatefulSet",
        "metadata:",
        "  name: {{ .Release.Name }}",
        "spec:",
        "  replicas: 1",
        "  serviceName: {{ .Release.Name }}",
        "  selector:",
        "    matchLabels: { app: {{ .Release.Name | quote }} }",
        "  template:",
        "    metadata:",
        "      labels: { app: {{ .Release.Name | quote }} }",
        "    spec:",
        "      containers:",
        "        - name: app",
        '          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"',
        "  volumeClaimTemplates:",
        "    - metadata: { name: data }",
        "      spec:",
        "        accessModes: [ReadWriteOnce]",
        "        volumeName: pv-of-another-tenant",
        "        resources: { requests: { storage: 1Gi } }",
        "",
      ].join("\n"),
    },
  ),
  chartAttack(
    "secret-takeover",
    "objects",
    "a chart Secret named like the tenant's existing Secret db-credentials",
    { condition: "Degraded", reason: "ChildOwnedElsewhere", message: /db-credentials/ },
    {
      "deployment.yaml": deployment(),
      "secret.yaml":
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\nstringData:\n  password: taken\n",
    },
    { setup: (context) => existingSecret(context) },
  ),
  chartAttack(
    "external-ips",
    "objects",
    "a chart Service with externalIPs (intercepting traffic to 8.8.8.8, CVE-2020-8554)",
    { condition: "Degraded", reason: "ChartServiceExternalIPs" },
    {
      "deployment.yaml": deployment(),
      "service.yaml": [
        "apiVersion: v1",
        "kind: Service",
        "metadata:",
        "  name: {{ .Release.Name }}",
        "spec:",
        "  selector: { app: {{ .Release.Name | quote }} }",
        "  ports: [{ port: 53, protocol: UDP }]",
        "  externalIPs: [8.8.8.8]",
        "",
      ].join("\n"),
    },
  ),
  chartAttack(
    "node-port",
    "objects",
    "a chart Service of type NodePort (a port on every node)",
    { condition: "Degraded", reason: "ChartServiceTypeNotAllowed" },
    {
      "deployment.yaml": deployment(),
      "service.yaml":
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  type: NodePort\n" +
        "  selector: { app: {{ .Release.Name | quote }} }\n  ports: [{ port: 80 }]\n",
    },
  ),
  chartAttack(
    "cluster-admin",
    "objects",
    "a chart ClusterRoleBinding of the namespace's default ServiceAccount to cluster-admin",
    { condition: "Degraded", reason: "ChartClusterScopedKind" },
    {
      "deployment.yaml": deployment(),
      "crb.yaml": [
        "apiVersion: rbac.authorization.k8s.io/v1",
        "kind: ClusterRoleBinding",
        "metadata:",
        "  name: {{ .Release.Namespace }}-admin",
        "roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin }",
        "subjects: [{ kind: ServiceAccount, name: default, namespace: {{ .Release.Namespace | quote }} }]",
        "",
      ].join("\n"),
    },
  ),
  chartAttack(
    "other-namespace",
    "objects",
    "a chart Deployment in kube-system",
    { condition: "Degraded", reason: "ChartNamespaceNotAllowed", message: /kube-system/ },
    {
      "deployment.yaml": deployment().replace(
        "  name: {{ .Release.Name }}\n",
        "  name: {{ .Release.Name }}\n  namespace: kube-system\n",
      ),
    },
  ),
];

/** The data of the tenant's own Secret that the secret-takeover chart renders by the same name. */
export const existingSecretData = { password: Buffer.from("the tenant's own").toString("base64") };

async function existingSecret({ client, namespace }: AttackContext): Promise<void> {
  await client.create({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "db-credentials", namespace },
    data: existingSecretData,
  });
}

/** Creates ServiceAccount `name` unless another attack of the tenant did. */
async function serviceAccount({ client, namespace }: AttackContext, name: string): Promise<void> {
  await client
    .create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } })
    .catch((error: unknown) => {
      if (!(error instanceof ConflictError)) throw error;
    });
}

/**
 * The flood: `count` tiny instances (0 replicas: a Deployment and a Service each, no pod) in one namespace,
 * created as fast as a tenant's client can. Each must be served, and the other tenants with it.
 */
export function floodMembers(count: number): { name: string; spec: { replicas: number; image: string } }[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `flood-${String(i).padStart(4, "0")}`,
    spec: { replicas: 0, image: hostileImage },
  }));
}
