/**
 * The arguments of MyAppOperator, their defaults, and their validation: `resolveSettings` turns what a user wrote
 * into the complete, checked settings every builder of this folder reads. Pure: the component turns its issues
 * into a pulumi.ResourceError, the renderer into a plain Error.
 */
import { chartSourcesCaProblem } from "./chart-sources-ca.ts";
import {
  isImageReference,
  type ChartKind,
  type ChartServiceType,
  type ChartSpec,
  type ChartSpecInput,
} from "../api/index.ts";
import { dns1123LabelRule, isDns1123Label, isQualifiedName, labelValuePattern } from "../api/dns-names.ts";
import { defaultRenderLimits, type RenderLimits } from "../chart/render-limits.ts";
import { reviewParseThreadHeapMiB } from "../chart/render-yaml-thread.ts";
import { argumentShapeProblems, type ArgumentShape } from "../api/argument-names.ts";
import { defaultConcurrency, maxConcurrency } from "../api/operator-ranges.ts";
import { renderMemoryProblem, resolveChartLimits } from "./chart-limits.ts";
import { resolveChartKinds } from "./chart-kinds.ts";
import { resolveChartServiceTypes } from "./chart-service-types.ts";
import { resolveDefaultChart } from "./default-chart.ts";
import type { ResourceRequirements } from "./manifest-types.ts";
import { resolvePlatformPolicy, type PlatformPolicyArgs, type PlatformPolicySettings } from "./platform-policy.ts";
import { resourceRequirementsProblems } from "./resource-requirements.ts";
import { resolveWebhooks, type CertManagerArgs, type WebhookArgs, type WebhookSettings } from "./webhooks.ts";

/** pino's levels, which the operator's `--log-level` accepts. */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal";

/** Where the operator process runs. */
export type OperatorPlacement = "in-cluster" | "external";

/** Arguments of {@link MyAppOperator}. Plain values, not Outputs: they decide which objects exist. */
export interface MyAppOperatorArgs {
  /**
   * Namespace of the operator's own objects (ServiceAccount, Deployment, Service, leader-election Lease).
   * @default "myapp-system"
   */
  readonly namespace?: string;
  /**
   * Create the namespace (labelled to enforce the Pod Security "restricted" level), or use an existing one.
   * @default true
   */
  readonly createNamespace?: boolean;
  /**
   * Operator container image, built from the repository's Dockerfile: required for an in-cluster operator, unused
   * by an external one. No image is published for you, so there is no default: build it and push it to a registry
   * your cluster pulls from with `npm run image -- --push REGISTRY/NAME:TAG`, then pass that reference.
   * @example "registry.example.com/platform/myapp-operator:0.2.0"
   */
  readonly image?: string;
  /** @default "IfNotPresent" */
  readonly imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /**
   * Operator pods. 2 or more turn on leader election (one active, the others on standby) and add a
   * PodDisruptionBudget that keeps one running through node drains. With `operatorPlacement: "external"` there are
   * no pods: the operator runs as the processes you start, which always elect a leader (`externalOperatorFlags`).
   * @default 1
   */
  readonly replicas?: number;
  /**
   * Namespaces whose MyAppInstances the operator manages. Empty: the whole cluster, granted by a ClusterRole.
   * A list: a Role and RoleBinding in each of those namespaces (which must exist); cluster-wide only what is
   * cluster-scoped: reading StorageClasses, and with the webhooks reading the watched Namespaces and injecting the
   * CA into the webhook configurations (by name), and in the cluster the metrics endpoint's token reviews.
   * @default [] (every namespace)
   * @example ["team-a", "team-b"]
   */
  readonly watchNamespaces?: readonly string[];
  /**
   * Compute resources of the operator container. The memory defaults come from measurements of the operator
   * converging a fleet through a TLS proxy (bench/RESULTS.md, "Side by side"), with the container's heap flags:
   * peak RSS 119.5 MiB at 1,000 instances and 347 MiB at 10,000 (docs/measured.md). The request is about the
   * 10,000 figure plus half (1.48×), the limit three times the request; raise both for a larger fleet. The
   * container's V8 heap follows the memory limit (`NODE_OPTIONS`: three quarters of it for the old generation,
   * 1 MiB semi-spaces; components/node-heap.ts).
   * @default { requests: { cpu: "100m", memory: "512Mi" }, limits: { memory: "1536Mi" } }
   */
  readonly resources?: ResourceRequirements;
  /** @default "info" */
  readonly logLevel?: LogLevel;
  /**
   * Instances reconciled in parallel (`--concurrency`).
   * @default 2
   */
  readonly concurrency?: number;
  /**
   * Kinds that Helm charts (an instance's `spec.chart`) may render, as `apiVersion/Kind`; the operator's RBAC
   * grants exactly these and the operator refuses any other kind in a render. Secrets are create/patch only.
   * Kinds charts can render: apps/v1/Deployment, apps/v1/StatefulSet, v1/Service, v1/ConfigMap, v1/Secret,
   * v1/ServiceAccount, networking.k8s.io/v1/Ingress, policy/v1/PodDisruptionBudget,
   * autoscaling/v2/HorizontalPodAutoscaler.
   * @default the built-in template's own kinds: apps/v1/Deployment, apps/v1/StatefulSet, v1/Service
   * @example ["apps/v1/Deployment", "apps/v1/StatefulSet", "v1/Service", "v1/ConfigMap"]
   */
  readonly chartKinds?: readonly string[];
  /**
   * Service types charts may render besides ClusterIP (always allowed); the operator refuses any other type in a
   * render (ChartServiceTypeNotAllowed). NodePort opens a port on every node, LoadBalancer may buy a cloud load
   * balancer, ExternalName aliases any DNS name: each is the platform's decision, not a tenant's.
   * @default ["ClusterIP"]
   * @example ["ClusterIP", "LoadBalancer"]
   */
  readonly chartServiceTypes?: readonly string[];
  /**
   * The chart for every instance whose spec names none (same shape as an instance's `spec.chart`).
   * @default none: such instances get the built-in Deployment/StatefulSet and Service
   * @example { oci: "oci://registry.example.com/charts/myapp", version: "1.2.3" }
   */
  readonly defaultChart?: ChartSpecInput;
  /**
   * Helm renders the operator runs at once (`--max-concurrent-renders`); more wait their turn. Each may use up
   * to `renderLimits.memoryMiB`, which the container's Node heap leaves room for.
   * @default 2
   */
  readonly maxConcurrentRenders?: number;
  /**
   * Limits of one helm render (`--render-memory`, `--render-cpu`, `--render-timeout`, `--render-output`,
   * `--render-objects`): a chart over one fails only its own instance (Degraded, reason ChartRenderLimit, naming the
   * limit). `valuesKiB`
   * (`--render-values`) bounds `spec.values` of every instance, chart or not: the webhook refuses more, and the
   * operator never keeps more in memory (Degraded, reason ValuesTooLarge, while the webhooks are off).
   * @default { memoryMiB: 256, cpuSeconds: 20, timeoutSeconds: 60, outputMiB: 16, objects: 500, valuesKiB: 128 }
   */
  readonly renderLimits?: Partial<RenderLimits>;
  /**
   * Remote chart sources instances may use, as URL prefixes (`--chart-sources`); any other is refused
   * (ChartSourceNotAllowed). Hosts the entries name may be private addresses (an in-cluster registry); no other
   * host, redirect or token service may. The default chart's own source is always allowed. A Namespace's
   * `myapp.example.com/chart-sources` annotation narrows the list for its instances (never widens it); so the
   * operator may `get` the watched Namespaces whenever the list is not empty.
   * @default [] (ConfigMap charts only)
   * @example ["oci://ghcr.io/my-org/charts/", "https://charts.example.com/"]
   */
  readonly chartSources?: readonly string[];
  /**
   * PEM certificates of the CAs that sign the chart sources' TLS certificates (a registry behind a private CA),
   * trusted beside Node's own (`NODE_EXTRA_CA_CERTS`). In the cluster: a ConfigMap mounted into the operator's pods,
   * which roll when it changes. An external operator's process needs `NODE_EXTRA_CA_CERTS` set to a file of them.
   * @default none: Node's CAs only
   */
  readonly chartSourcesCa?: string;
  /**
   * The platform's rules for instances: allowed image registries, the largest instance, each namespace's budget
   * (platform-policy.ts). The operator's validating webhook refuses an instance that breaks one at `kubectl apply`
   * and `pulumi preview`, naming the field, the rule and the limit; so the webhooks must be on.
   * @default none: only the CRD's own rules and `chartSources`
   * @example { allowedRegistries: ["ghcr.io/acme"], maxReplicas: 10, namespaceBudget: { instances: 20, storage: "200Gi" } }
   */
  readonly policy?: PlatformPolicyArgs;
  /**
   * The operator's admission webhooks (webhooks.ts: failure behaviour, what they match).
   * @default on in-cluster (through a Service); off for an external operator unless `url` says where it listens
   */
  readonly webhooks?: WebhookArgs;
  /** Extra labels for every object (never used in selectors). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Extra annotations for every object. */
  readonly annotations?: Readonly<Record<string, string>>;
  /**
   * "in-cluster" runs the operator as a Deployment. "external" installs the CRD, namespace, ServiceAccount and
   * RBAC only, for an operator process that runs elsewhere with the ServiceAccount's credentials (the local
   * cluster, where pods do not execute).
   * @default "in-cluster"
   */
  readonly operatorPlacement?: OperatorPlacement;
  /**
   * Delete the CRD on `pulumi destroy`. Deleting a CRD deletes every MyAppInstance in the cluster and, through
   * them, users' applications, so by default the CRD is left in place (and adopted by the next install).
   * @default false
   */
  readonly deleteCrdOnDestroy?: boolean;
  /**
   * Let Kubernetes' default roles manage instances (tenant-roles.ts): ClusterRoles that aggregate to `admin` and
   * `edit` (create, change, delete and scale instances, never their status) and to `view` (read them). false: grant
   * instance rights yourself.
   * @default true
   */
  readonly tenantRoles?: boolean;
}

/** Every argument resolved: defaults applied and checked. */
export interface OperatorSettings {
  /** Base name of the Kubernetes objects (the component's name). */
  readonly name: string;
  readonly namespace: string;
  readonly createNamespace: boolean;
  /** The operator image; empty for an external operator (which has no Deployment). */
  readonly image: string;
  readonly imagePullPolicy: "Always" | "IfNotPresent" | "Never";
  readonly replicas: number;
  /** On when replicas ≥ 2. */
  readonly leaderElection: boolean;
  /** Empty: cluster-wide. */
  readonly watchNamespaces: readonly string[];
  readonly resources: ResourceRequirements;
  readonly logLevel: LogLevel;
  readonly concurrency: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly operatorPlacement: OperatorPlacement;
  /** What charts may render. */
  readonly chartKinds: readonly ChartKind[];
  /** Service types charts may render (ClusterIP among them). */
  readonly chartServiceTypes: readonly ChartServiceType[];
  /** The platform's default chart, if any. */
  readonly defaultChart: ChartSpec | undefined;
  /** Helm renders at once. */
  readonly maxConcurrentRenders: number;
  /** Limits of one render. */
  readonly renderLimits: RenderLimits;
  /** Remote chart sources allowed (URL prefixes); empty: ConfigMap charts only. */
  readonly chartSources: readonly string[];
  /** The CAs the chart sources are signed by (PEM), beside Node's own; undefined: Node's only. */
  readonly chartSourcesCa: string | undefined;
  /** The platform policy the webhooks enforce; undefined: none. */
  readonly policy: PlatformPolicySettings | undefined;
  readonly webhooks: WebhookSettings;
  readonly deleteCrdOnDestroy: boolean;
  /** Whether the default roles `admin`, `edit` and `view` include instances (tenant-roles.ts). */
  readonly tenantRoles: boolean;
}

/** A rejected argument: which one, and what to do. */
export interface SettingsIssue {
  readonly field: string;
  readonly message: string;
}

export type SettingsResult =
  | { readonly ok: true; readonly settings: OperatorSettings }
  | { readonly ok: false; readonly issues: readonly SettingsIssue[] };

export const defaultNamespace = "myapp-system";
/** How to get an image for `image`: the message of a missing or invalid one says it. */
export const imageHowTo =
  "build the operator image and push it to a registry your cluster pulls from with " +
  "`npm run image -- --push REGISTRY/NAME:TAG` (in a clone of the repository; or `docker build` its Dockerfile), " +
  'then pass that reference; or set operatorPlacement: "external" and run the operator yourself ' +
  "(`npx --no-install myapp-operator` with the flags the component's externalOperatorFlags lists)";
export const defaultResources: ResourceRequirements = {
  requests: { cpu: "100m", memory: "512Mi" },
  // 1.5Gi: beside two helm renders (2 × 256 MiB), the YAML parsing thread (128 MiB) and the webhooks' review
  // thread (64 MiB), Node's heap is 624 MiB.
  limits: { memory: "1536Mi" },
};
const logLevels: readonly LogLevel[] = ["trace", "debug", "info", "warn", "error", "fatal"];

/** Label keys the builders set themselves and use in selectors; user labels must not change them. */
export const reservedLabelKeys: readonly string[] = ["app.kubernetes.io/name", "app.kubernetes.io/instance"];

// The apiserver's own syntaxes (api/dns-names.ts), so what passes here passes there.
const labelValue = new RegExp(labelValuePattern);
const keyRule =
  "an optional DNS subdomain prefix of at most 253 characters and '/', then at most 63 alphanumerics, '-', '_', '.'";

/**
 * What each argument of {@link MyAppOperatorArgs} must be (the types make the lists whole): an unknown or
 * wrongly typed one is refused by name before anything reads it.
 */
const argumentShape = {
  namespace: "string",
  createNamespace: "boolean",
  image: "string",
  imagePullPolicy: "string",
  replicas: "number",
  watchNamespaces: "string list",
  resources: "object",
  logLevel: "string",
  concurrency: "number",
  chartKinds: "string list",
  chartServiceTypes: "string list",
  defaultChart: "object",
  maxConcurrentRenders: "number",
  renderLimits: Object.fromEntries(Object.keys(defaultRenderLimits).map((key) => [key, "number" as const])),
  chartSources: "string list",
  chartSourcesCa: "string",
  policy: {
    allowedRegistries: "string list",
    maxReplicas: "number",
    maxStorage: "string",
    namespaceBudget: { instances: "number", replicas: "number", storage: "string" } satisfies Record<
      keyof NonNullable<PlatformPolicyArgs["namespaceBudget"]>,
      ArgumentShape
    >,
    requireExpandableStorage: "boolean",
  } satisfies Record<keyof PlatformPolicyArgs, ArgumentShape>,
  webhooks: {
    enabled: "boolean",
    url: "string",
    defaults: "string",
    certManager: { issuer: "string", kind: "string" } satisfies Record<keyof CertManagerArgs, ArgumentShape>,
  } satisfies Record<keyof WebhookArgs, ArgumentShape>,
  labels: "string map",
  annotations: "string map",
  operatorPlacement: "string",
  deleteCrdOnDestroy: "boolean",
  tenantRoles: "boolean",
} satisfies Record<keyof MyAppOperatorArgs, ArgumentShape>;

const imagePullPolicies = ["Always", "IfNotPresent", "Never"] as const;

/** Arguments of the operator's pods, which an external operator does not have. */
const inClusterArguments = ["image", "imagePullPolicy", "replicas", "resources"] as const;

/** Applies defaults and checks every argument; all issues at once, so one run shows everything to fix. */
export function resolveSettings(name: string, args: MyAppOperatorArgs = {}): SettingsResult {
  // What the checks below read must be of its type first: a JavaScript program's `"false"` is not false.
  const shapeIssues = argumentShapeProblems(args ?? {}, argumentShape);
  if (shapeIssues.length > 0) return { ok: false, issues: shapeIssues };
  const issues: SettingsIssue[] = [];
  const problem = (field: string, message: string) => issues.push({ field, message });

  // Object names get suffixes such as "-leader-election" (16 characters); keep the longest within 63.
  if (!isDns1123Label(name) || name.length > 47) {
    problem("name", `"${name}" must be a DNS-1123 label of at most 47 characters (lowercase letters, digits, '-')`);
  }
  const namespace = args.namespace ?? defaultNamespace;
  if (!isNamespaceName(namespace)) problem("namespace", namespaceMessage(namespace));

  const replicas = args.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 0 || replicas > 10) {
    problem("replicas", `${replicas} must be a whole number from 0 to 10 (2 or more turn on leader election)`);
  }
  const concurrency = args.concurrency ?? defaultConcurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > maxConcurrency) {
    problem("concurrency", `${concurrency} must be a whole number from 1 to ${maxConcurrency}`);
  }
  const operatorPlacement = args.operatorPlacement ?? "in-cluster";
  // An empty string counts as not given (a stack's `config.get(...) ?? ""`).
  const image = args.image?.trim() ?? "";
  if (!image && operatorPlacement === "in-cluster") {
    problem("image", `is required for operatorPlacement "in-cluster" (no image is published): ${imageHowTo}`);
  } else if (image && !isImageReference(image)) {
    problem(
      "image",
      `"${args.image}" is not an image reference [registry[:port]/]repository[:tag][@digest] with a lower-case ` +
        `repository, such as registry.example.com/platform/myapp-operator:0.2.0`,
    );
  }

  const imagePullPolicy = args.imagePullPolicy ?? "IfNotPresent";
  if (!imagePullPolicies.includes(imagePullPolicy)) {
    problem("imagePullPolicy", `"${imagePullPolicy}" must be one of ${imagePullPolicies.join(", ")}`);
  }
  if (operatorPlacement === "external") {
    // Said, not dropped: whoever set them expects pods that an external operator does not have.
    for (const argument of inClusterArguments) {
      if (argument === "image" ? image !== "" : args[argument] !== undefined) {
        problem(
          argument,
          'is for the operator\'s pods, which operatorPlacement "external" does not have (the operator runs as ' +
            "the processes you start, with externalOperatorFlags): leave it out, or run the operator in the cluster",
        );
      }
    }
  }
  for (const [field, message] of resourceRequirementsProblems(args.resources ?? {})) problem(field, message);

  const logLevel = args.logLevel ?? "info";
  if (!logLevels.includes(logLevel)) problem("logLevel", `"${logLevel}" must be one of ${logLevels.join(", ")}`);

  const watchNamespaces = [...(args.watchNamespaces ?? [])];
  watchNamespaces.forEach((ns, i) => {
    if (!isNamespaceName(ns)) problem(`watchNamespaces[${i}]`, namespaceMessage(ns));
    if (watchNamespaces.indexOf(ns) !== i) problem(`watchNamespaces[${i}]`, `"${ns}" is listed twice; list it once`);
  });

  const labels = { ...args.labels };
  for (const [key, value] of Object.entries(labels)) {
    if (reservedLabelKeys.includes(key)) {
      problem(`labels.${key}`, `is set by the component and used in selectors; choose another key`);
    } else if (!isQualifiedName(key)) {
      problem(`labels.${key}`, `is not a valid label key: ${keyRule}`);
    } else if (!labelValue.test(value)) {
      problem(`labels.${key}`, `"${value}" is not a valid label value (≤ 63 alphanumerics, '-', '_', '.')`);
    }
  }
  const annotations = { ...args.annotations };
  for (const key of Object.keys(annotations)) {
    // The apiserver reads an annotation key in lower case (apimachinery ValidateAnnotations); a label key as written.
    if (!isQualifiedName(key.toLowerCase())) problem(`annotations.${key}`, `is not a valid annotation key: ${keyRule}`);
  }
  if (operatorPlacement !== "in-cluster" && operatorPlacement !== "external") {
    problem("operatorPlacement", `"${String(operatorPlacement)}" must be "in-cluster" or "external"`);
  }

  const chartKinds = resolveChartKinds(args.chartKinds);
  if (!chartKinds.ok) issues.push(...chartKinds.issues);
  const chartServiceTypes = resolveChartServiceTypes(args.chartServiceTypes);
  if (!chartServiceTypes.ok) issues.push(...chartServiceTypes.issues);
  const defaultChart = resolveDefaultChart(args.defaultChart);
  if (!defaultChart.ok) for (const message of defaultChart.messages) problem("defaultChart", message);
  const policy = resolvePlatformPolicy(args.policy);
  if (!policy.ok) issues.push(...policy.issues);
  const webhooks = resolveWebhooks(args.webhooks, operatorPlacement);
  if (!webhooks.ok) issues.push(...webhooks.issues);
  if (policy.ok && policy.policy && webhooks.ok && !webhooks.webhooks.enabled) {
    problem(
      "policy",
      "is enforced by the operator's admission webhooks, which are off: turn them on (webhooks.enabled, and " +
        "webhooks.url for an external operator) or leave policy out",
    );
  }
  const chartLimits = resolveChartLimits(args);
  if (!chartLimits.ok) for (const { field, message } of chartLimits.problems) problem(field, message);
  if (!chartLimits.ok) return { ok: false, issues };
  const reviewsMiB = webhooks.ok && webhooks.webhooks.enabled ? reviewParseThreadHeapMiB : 0;
  // An external operator has no container limit to fit in: its process runs where the platform owner starts it.
  const renderMemory =
    operatorPlacement === "external"
      ? undefined
      : renderMemoryProblem(args.resources ?? defaultResources, chartLimits.settings, reviewsMiB);
  if (renderMemory) problem("resources.limits.memory", renderMemory);
  // An empty string counts as not given (a stack's `config.get(...) ?? ""`).
  const chartSourcesCa = args.chartSourcesCa?.trim() ? args.chartSourcesCa : undefined;
  const caProblem = chartSourcesCa === undefined ? undefined : chartSourcesCaProblem(chartSourcesCa);
  if (caProblem) problem("chartSourcesCa", caProblem);

  if (issues.length > 0 || !chartKinds.ok || !chartServiceTypes.ok || !defaultChart.ok || !policy.ok || !webhooks.ok) {
    return { ok: false, issues };
  }
  return {
    ok: true,
    settings: {
      name,
      namespace,
      createNamespace: args.createNamespace ?? true,
      image,
      imagePullPolicy,
      replicas,
      leaderElection: replicas >= 2,
      watchNamespaces,
      resources: args.resources ?? defaultResources,
      logLevel,
      concurrency,
      labels,
      annotations,
      operatorPlacement,
      chartKinds: chartKinds.kinds,
      chartServiceTypes: chartServiceTypes.types,
      defaultChart: defaultChart.chart,
      ...chartLimits.settings,
      chartSourcesCa,
      policy: policy.policy,
      webhooks: webhooks.webhooks,
      deleteCrdOnDestroy: args.deleteCrdOnDestroy ?? false,
      tenantRoles: args.tenantRoles ?? true,
    },
  };
}

/** One line per issue, for error messages: `MyAppOperator "x": replicas: ... `. */
export function describeIssues(subject: string, issues: readonly SettingsIssue[]): string {
  return [`${subject} has invalid arguments:`, ...issues.map((i) => `  ${i.field}: ${i.message}`)].join("\n");
}

const isNamespaceName = isDns1123Label;

function namespaceMessage(name: string): string {
  return `"${name}" is not a namespace name: use ${dns1123LabelRule}`;
}
