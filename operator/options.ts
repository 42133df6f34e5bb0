/**
 * Operator settings from flags, with MYAPP_* environment variables as fallbacks (flags win). Pure: argv and env
 * in, settings or a clear error out.
 */
import { parseArgs } from "node:util";
import {
  chartKindName,
  chartSchema,
  defaultChartKinds,
  defaultChartServiceTypes,
  parseChartKinds,
  parseChartServiceTypes,
  renderableChartKinds,
  serviceTypes,
  type ChartKind,
  type ChartServiceType,
  type ChartSpec,
} from "../api/index.ts";
import {
  defaultMaxConcurrentRenders,
  defaultRenderLimits,
  minRenderMemoryMiB,
  type RenderLimits,
} from "../chart/render-limits.ts";
import { chartSourceProblems, chartSourcesWithDefault } from "../chart/source-policy.ts";
import {
  parseAllowedRegistries,
  parseDuration,
  parseSecretReference,
  parseWebhookHosts,
  policyFlags,
  storageLimitFlag,
  type PlatformPolicy,
  type WebhookOptions,
} from "./admission/policy.ts";

export type { PlatformPolicy, WebhookOptions } from "./admission/policy.ts";

export interface OperatorOptions {
  /** Watched namespaces; empty means the whole cluster. */
  readonly namespaces: readonly string[];
  readonly leaderElect: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionId: string;
  readonly metricsAddress: Address;
  /** Require a bearer token allowed to `get /metrics` (TokenReview + SubjectAccessReview). */
  readonly metricsSecure: boolean;
  /** A directory with tls.crt and tls.key: serve /metrics over HTTPS. */
  readonly metricsCertDir: string | undefined;
  readonly probeAddress: Address;
  readonly logLevel: string;
  readonly concurrency: number;
  readonly maxConsecutiveFailures: number;
  /** How often a key retries once its fast retries are used up (the slow lane). */
  readonly slowRetryIntervalMs: number;
  readonly resyncPeriodMs: number;
  /**
   * `--kubeconfig`: one file, which must exist. Unset: kubectl's order (kube/config.ts `loadKubeConfig`): the files
   * of KUBECONFIG (missing ones skipped), else ~/.kube/config, else the in-cluster config in a pod.
   */
  readonly kubeconfig: string | undefined;
  /** The KUBECONFIG of the environment given (a list of files), read when `kubeconfig` is unset. */
  readonly kubeconfigList: string | undefined;
  /** The helm binary that renders spec.chart. */
  readonly helm: string;
  /** Kinds a chart may render (the platform's allow-list; the RBAC grants exactly these). */
  readonly chartKinds: readonly ChartKind[];
  /** Service types a chart may render (ClusterIP always; the others only when the platform lists them). */
  readonly chartServiceTypes: readonly ChartServiceType[];
  /** The chart for instances whose spec names none; unset: the built-in template. */
  readonly defaultChart: ChartSpec | undefined;
  /** Helm renders at once; more wait their turn. */
  readonly maxConcurrentRenders: number;
  /** Memory, CPU time, wall time and output of one render. */
  readonly renderLimits: RenderLimits;
  /** URL prefixes remote charts may come from; empty: ConfigMap charts only. */
  readonly chartSources: readonly string[];
  /** What the admission webhook lets instances be. */
  readonly policy: PlatformPolicy;
  /** The admission webhook's server and certificates; undefined: no webhook server (`--webhook-bind-address` unset). */
  readonly webhook: WebhookOptions | undefined;
}

export interface Address {
  readonly host: string;
  readonly port: number;
}

export const usage = `Usage: myapp-operator [flags]   (in a checkout of the repository: npm run operator -- [flags])
  -h, --help                       print this usage and exit
  --version                        print the operator's version and exit
  --namespaces=a,b                 watch only these namespaces (default: all)          MYAPP_NAMESPACES
  --leader-elect                   run leader election on a Lease (for replicas >= 2)  MYAPP_LEADER_ELECT=true
  --leader-election-namespace=NS   the Lease's namespace (default: POD_NAMESPACE or default)
  --leader-election-id=NAME        the Lease's name (default: myapp-operator)
  --metrics-bind-address=[H]:P     /metrics (default 127.0.0.1:8080: localhost only;   MYAPP_METRICS_BIND_ADDRESS
                                   ":8080" for every interface; port 0 picks a free port)
  --metrics-secure                 /metrics only for bearer tokens allowed to get it,    MYAPP_METRICS_SECURE=true
                                   over HTTPS (TokenReview + SubjectAccessReview, as controller-runtime)
  --metrics-cert-dir=DIR           HTTPS /metrics with DIR/tls.crt, DIR/tls.key (default with --metrics-secure:
                                   a self-signed certificate made at start)
  --health-probe-bind-address=[H]:P  /healthz and /readyz (default :8081)             MYAPP_HEALTH_PROBE_BIND_ADDRESS
  --log-level=LEVEL                trace|debug|info|warn|error|fatal|silent (default info)
                                                                                       MYAPP_LOG_LEVEL
  --concurrency=N                  reconciles at once, never two of one key (default 2) MYAPP_CONCURRENCY
  --max-consecutive-failures=N     fast retries before an instance is marked Stalled (default 15)
  --slow-retry-interval=SECONDS    then retry this often (±10 %) until it succeeds; also how often a verdict
                                   caused outside the spec (a name taken, a quota, a namespace's chart sources) is
                                   looked at again (default 300)
  --resync-period=SECONDS          re-reconcile everything this often (default 36000: 10 h, as controller-runtime)
  --kubeconfig=PATH                credentials (default: KUBECONFIG's files, ~/.kube/config, else in-cluster)
  --helm=PATH                      helm binary that renders spec.chart (default: helm on PATH)  MYAPP_HELM
  --default-chart=JSON              chart for instances without spec.chart, e.g. {"oci":"oci://r/c","version":"1.0.0"}  MYAPP_DEFAULT_CHART
  --max-concurrent-renders=N       helm renders at once (default ${defaultMaxConcurrentRenders})  MYAPP_MAX_CONCURRENT_RENDERS
  --render-memory=MIB              memory one render may use (default ${defaultRenderLimits.memoryMiB})  MYAPP_RENDER_MEMORY
  --render-cpu=SECONDS             CPU time one render may use (default ${defaultRenderLimits.cpuSeconds})  MYAPP_RENDER_CPU
  --render-timeout=SECONDS         wall time of one render (default ${defaultRenderLimits.timeoutSeconds})  MYAPP_RENDER_TIMEOUT
  --render-output=MIB              largest rendered output (default ${defaultRenderLimits.outputMiB})  MYAPP_RENDER_OUTPUT
  --render-objects=N               most objects one render may hold (default ${defaultRenderLimits.objects})  MYAPP_RENDER_OBJECTS
  --render-values=KIB              largest spec.values, as compact JSON; larger is refused by the webhook and never
                                   kept in memory (default ${defaultRenderLimits.valuesKiB})  MYAPP_RENDER_VALUES
  --chart-sources=oci://r/org/,https://charts.example.com/   remote chart sources allowed, as URL prefixes;
                                   hosts they name may be private addresses (default: none, ConfigMap charts only)  MYAPP_CHART_SOURCES
  --chart-kinds=v1/Service,...     kinds a chart may render, apiVersion/Kind (default: ${defaultChartKinds.map(chartKindName).join(",")}; any of ${renderableChartKinds.map(chartKindName).join(",")})  MYAPP_CHART_KINDS
  --chart-service-types=ClusterIP,...  Service types a chart may render (default ClusterIP; any of ${serviceTypes.join(",")})  MYAPP_CHART_SERVICE_TYPES
Platform policy (enforced by the admission webhook; unset: no limit):
  --allowed-registries=docker.io/library,ghcr.io/acme   image prefixes instances may use, after Docker's
                                   normalisation (nginx is docker.io/library/nginx); default: any  MYAPP_ALLOWED_REGISTRIES
  --max-replicas=N                 most spec.replicas of one instance                  MYAPP_MAX_REPLICAS
  --max-storage=QUANTITY           largest spec.storage (one volume), e.g. 100Gi       MYAPP_MAX_STORAGE
  --namespace-max-instances=N      instances per namespace                             MYAPP_NAMESPACE_MAX_INSTANCES
  --namespace-max-replicas=N       replicas of all instances of a namespace            MYAPP_NAMESPACE_MAX_REPLICAS
  --namespace-max-storage=QUANTITY storage (spec.storage x spec.replicas) of a namespace  MYAPP_NAMESPACE_MAX_STORAGE
                                   a namespace's labels myapp.example.com/max-instances, /max-replicas and
                                   /max-storage replace these three for that namespace
  --require-expandable-storage     StorageClasses must allow volume expansion          MYAPP_REQUIRE_EXPANDABLE_STORAGE=true
Admission webhook:
  --webhook-bind-address=[H]:P     serve the webhooks over HTTPS here (default: no webhook server)  MYAPP_WEBHOOK_BIND_ADDRESS
  --webhook-cert-secret=NS/NAME    the Secret with its CA and certificate               MYAPP_WEBHOOK_CERT_SECRET
                                   (default <POD_NAMESPACE or default>/myapp-operator-webhook-cert)
  --webhook-configuration=NAME     the Validating- and MutatingWebhookConfiguration that get the CA bundle
                                   (default myapp-operator)                            MYAPP_WEBHOOK_CONFIGURATION
  --webhook-hosts=a,b              the certificate's DNS names and IPs (default localhost,127.0.0.1)  MYAPP_WEBHOOK_HOSTS
  --webhook-cert-validity=DURATION serving certificate lifetime, e.g. 2160h, 60s      MYAPP_WEBHOOK_CERT_VALIDITY
                                   (default 2160h: 90 days; the CA lives 10x as long)
  --webhook-cert-issuer=operator|external  who keeps the Secret: the operator (creates, rotates), or another issuer
                                   such as cert-manager (tls.crt, tls.key, ca.crt; only read; default operator)
                                                                                       MYAPP_WEBHOOK_CERT_ISSUER
  --webhook-defaults=webhook|policy who applies namespace defaults: the mutating webhook, or a MutatingAdmissionPolicy
                                   in the apiserver (no /mutate, no MutatingWebhookConfiguration; default webhook)
                                                                                       MYAPP_WEBHOOK_DEFAULTS`;

const logLevels = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): OperatorOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      namespaces: { type: "string" },
      "leader-elect": { type: "boolean" },
      "leader-election-namespace": { type: "string" },
      "leader-election-id": { type: "string" },
      "metrics-bind-address": { type: "string" },
      "metrics-secure": { type: "boolean" },
      "metrics-cert-dir": { type: "string" },
      "health-probe-bind-address": { type: "string" },
      "log-level": { type: "string" },
      concurrency: { type: "string" },
      "max-consecutive-failures": { type: "string" },
      "slow-retry-interval": { type: "string" },
      "resync-period": { type: "string" },
      kubeconfig: { type: "string" },
      helm: { type: "string" },
      "chart-kinds": { type: "string" },
      "chart-service-types": { type: "string" },
      "default-chart": { type: "string" },
      "max-concurrent-renders": { type: "string" },
      "render-memory": { type: "string" },
      "render-cpu": { type: "string" },
      "render-timeout": { type: "string" },
      "render-output": { type: "string" },
      "render-objects": { type: "string" },
      "render-values": { type: "string" },
      "chart-sources": { type: "string" },
      "allowed-registries": { type: "string" },
      "max-replicas": { type: "string" },
      "max-storage": { type: "string" },
      "namespace-max-instances": { type: "string" },
      "namespace-max-replicas": { type: "string" },
      "namespace-max-storage": { type: "string" },
      "require-expandable-storage": { type: "boolean" },
      "webhook-bind-address": { type: "string" },
      "webhook-cert-secret": { type: "string" },
      "webhook-configuration": { type: "string" },
      "webhook-hosts": { type: "string" },
      "webhook-cert-validity": { type: "string" },
      "webhook-defaults": { type: "string" },
      "webhook-cert-issuer": { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
    },
  });
  if (values.help) throw new UsageRequested();
  if (values.version) throw new VersionRequested();
  const namespaces = (values.namespaces ?? env.MYAPP_NAMESPACES ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  const logLevel = values["log-level"] ?? env.MYAPP_LOG_LEVEL ?? "info";
  if (!logLevels.includes(logLevel))
    throw new Error(`--log-level must be one of ${logLevels.join(", ")}, got "${logLevel}"`);
  const sources = chartSources(values["chart-sources"] ?? env.MYAPP_CHART_SOURCES);
  const chart = defaultChart(values["default-chart"] ?? env.MYAPP_DEFAULT_CHART);
  const metricsAddress = address(
    "--metrics-bind-address",
    // Localhost by default: unauthenticated metrics must not be reachable from the pod network unless asked.
    values["metrics-bind-address"] ?? env.MYAPP_METRICS_BIND_ADDRESS ?? "127.0.0.1:8080",
  );
  const probeAddress = address(
    "--health-probe-bind-address",
    values["health-probe-bind-address"] ?? env.MYAPP_HEALTH_PROBE_BIND_ADDRESS ?? ":8081",
  );
  const metricsSecure = values["metrics-secure"] ?? env.MYAPP_METRICS_SECURE === "true";
  // One address would be one server, and the probes' is plain HTTP (the kubelet probes without TLS or a token).
  if (metricsSecure && metricsAddress.port !== 0 && sameAddress(metricsAddress, probeAddress)) {
    throw new Error(
      "--metrics-secure serves /metrics over HTTPS on a port of its own: --metrics-bind-address must differ from " +
        `--health-probe-bind-address, got ${metricsAddress.host}:${metricsAddress.port} for both`,
    );
  }
  const renderLimits: RenderLimits = {
    memoryMiB: renderMemory(values["render-memory"] ?? env.MYAPP_RENDER_MEMORY),
    cpuSeconds: positiveInteger(
      "--render-cpu",
      values["render-cpu"] ?? env.MYAPP_RENDER_CPU ?? String(defaultRenderLimits.cpuSeconds),
    ),
    timeoutSeconds: positiveInteger(
      "--render-timeout",
      values["render-timeout"] ?? env.MYAPP_RENDER_TIMEOUT ?? String(defaultRenderLimits.timeoutSeconds),
    ),
    outputMiB: positiveInteger(
      "--render-output",
      values["render-output"] ?? env.MYAPP_RENDER_OUTPUT ?? String(defaultRenderLimits.outputMiB),
    ),
    objects: positiveInteger(
      "--render-objects",
      values["render-objects"] ?? env.MYAPP_RENDER_OBJECTS ?? String(defaultRenderLimits.objects),
    ),
    valuesKiB: positiveInteger(
      "--render-values",
      values["render-values"] ?? env.MYAPP_RENDER_VALUES ?? String(defaultRenderLimits.valuesKiB),
    ),
  };
  return {
    namespaces,
    leaderElect: values["leader-elect"] ?? env.MYAPP_LEADER_ELECT === "true",
    leaderElectionNamespace: values["leader-election-namespace"] ?? env.POD_NAMESPACE ?? "default",
    leaderElectionId: values["leader-election-id"] ?? "myapp-operator",
    metricsAddress,
    metricsSecure,
    metricsCertDir: values["metrics-cert-dir"],
    probeAddress,
    logLevel,
    concurrency: positiveInteger("--concurrency", values.concurrency ?? env.MYAPP_CONCURRENCY ?? "2"),
    maxConsecutiveFailures: positiveInteger("--max-consecutive-failures", values["max-consecutive-failures"] ?? "15"),
    slowRetryIntervalMs: positiveInteger("--slow-retry-interval", values["slow-retry-interval"] ?? "300") * 1000,
    resyncPeriodMs: positiveInteger("--resync-period", values["resync-period"] ?? "36000") * 1000,
    // KUBECONFIG is not a --kubeconfig: it may list several files, and missing ones are skipped (loadKubeConfig).
    kubeconfig: values.kubeconfig,
    kubeconfigList: env.KUBECONFIG || undefined,
    helm: values.helm ?? env.MYAPP_HELM ?? "helm",
    chartKinds: chartKinds(values["chart-kinds"] ?? env.MYAPP_CHART_KINDS),
    chartServiceTypes: chartServiceTypes(values["chart-service-types"] ?? env.MYAPP_CHART_SERVICE_TYPES),
    defaultChart: chart,
    maxConcurrentRenders: positiveInteger(
      "--max-concurrent-renders",
      values["max-concurrent-renders"] ?? env.MYAPP_MAX_CONCURRENT_RENDERS ?? String(defaultMaxConcurrentRenders),
    ),
    renderLimits,
    chartSources: sources,
    policy: {
      allowedRegistries: parseAllowedRegistries(values["allowed-registries"] ?? env.MYAPP_ALLOWED_REGISTRIES),
      maxReplicas: optionalPositiveInteger(policyFlags.maxReplicas, values["max-replicas"] ?? env.MYAPP_MAX_REPLICAS),
      maxStorage: storageLimitFlag(policyFlags.maxStorage, values["max-storage"] ?? env.MYAPP_MAX_STORAGE),
      namespaceBudget: withoutUndefined({
        instances: optionalPositiveInteger(
          policyFlags.instances,
          values["namespace-max-instances"] ?? env.MYAPP_NAMESPACE_MAX_INSTANCES,
        ),
        replicas: optionalPositiveInteger(
          policyFlags.replicas,
          values["namespace-max-replicas"] ?? env.MYAPP_NAMESPACE_MAX_REPLICAS,
        ),
        storage: storageLimitFlag(
          policyFlags.storage,
          values["namespace-max-storage"] ?? env.MYAPP_NAMESPACE_MAX_STORAGE,
        ),
      }),
      requireExpandableStorage: values["require-expandable-storage"] ?? env.MYAPP_REQUIRE_EXPANDABLE_STORAGE === "true",
      maxValuesKiB: renderLimits.valuesKiB,
      // What the chart engine allows (chart-wiring.ts): the list, and the platform's own default chart's source.
      chartSources: chartSourcesWithDefault(sources, chart),
      ...(chart ? { defaultChart: chart } : {}),
    },
    webhook: webhookOptions(values, env),
  };
}

/** `--help` or `-h`: print the usage and exit 0 (thrown so that no other flag is checked first). */
export class UsageRequested extends Error {}

/** `--version`: print the version and exit 0. */
export class VersionRequested extends Error {}

function sameAddress(a: Address, b: Address): boolean {
  return a.host === b.host && a.port === b.port;
}

function address(flag: string, value: string): Address {
  const match = /^(?:(.*):)?(\d+)$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new Error(`${flag} must be [host]:port with a port from 0 to 65535, got "${value}"`);
  return { host: match[1] || "0.0.0.0", port };
}

/** The webhook's settings, or undefined without `--webhook-bind-address` (the other webhook flags are then unused). */
function webhookOptions(
  values: {
    "webhook-bind-address"?: string | undefined;
    "webhook-cert-secret"?: string | undefined;
    "webhook-configuration"?: string | undefined;
    "webhook-hosts"?: string | undefined;
    "webhook-cert-validity"?: string | undefined;
    "webhook-defaults"?: string | undefined;
    "webhook-cert-issuer"?: string | undefined;
  },
  env: NodeJS.ProcessEnv,
): WebhookOptions | undefined {
  const bind = values["webhook-bind-address"] ?? env.MYAPP_WEBHOOK_BIND_ADDRESS;
  if (bind === undefined || bind.trim() === "") return undefined;
  const configuration = values["webhook-configuration"] ?? env.MYAPP_WEBHOOK_CONFIGURATION ?? "myapp-operator";
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(configuration) || configuration.length > 253) {
    throw new Error(`--webhook-configuration must be a lower-case DNS name, got "${configuration}"`);
  }
  const defaults = values["webhook-defaults"] ?? env.MYAPP_WEBHOOK_DEFAULTS ?? "webhook";
  if (defaults !== "webhook" && defaults !== "policy") {
    throw new Error(`--webhook-defaults must be webhook or policy, got "${defaults}"`);
  }
  const certIssuer = values["webhook-cert-issuer"] ?? env.MYAPP_WEBHOOK_CERT_ISSUER ?? "operator";
  if (certIssuer !== "operator" && certIssuer !== "external") {
    throw new Error(`--webhook-cert-issuer must be operator or external, got "${certIssuer}"`);
  }
  return {
    address: address("--webhook-bind-address", bind),
    certSecret: parseSecretReference(
      "--webhook-cert-secret",
      values["webhook-cert-secret"] ??
        env.MYAPP_WEBHOOK_CERT_SECRET ??
        `${env.POD_NAMESPACE ?? "default"}/myapp-operator-webhook-cert`,
    ),
    configuration,
    hosts: parseWebhookHosts(
      "--webhook-hosts",
      values["webhook-hosts"] ?? env.MYAPP_WEBHOOK_HOSTS ?? "localhost,127.0.0.1",
    ),
    certValidityMs: parseDuration(
      "--webhook-cert-validity",
      values["webhook-cert-validity"] ?? env.MYAPP_WEBHOOK_CERT_VALIDITY ?? "2160h",
    ),
    defaults,
    certIssuer,
  };
}

/** A positive integer, or undefined when unset or empty (no limit). */
function optionalPositiveInteger(flag: string, value: string | undefined): number | undefined {
  return value === undefined || value.trim() === "" ? undefined : positiveInteger(flag, value);
}

/** The object without its undefined members: a budget left unset is absent, so `{}` reads as "no budget". */
function withoutUndefined<T extends object>(object: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

function positiveInteger(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer, got "${value}"`);
  return n;
}

/** `apps/v1/Deployment,v1/Service` → kinds; unset → the built-in template's kinds (wider kinds are opt-in). */
function chartKinds(value: string | undefined): readonly ChartKind[] {
  if (value === undefined || value.trim() === "") return defaultChartKinds;
  const parsed = parseChartKinds(value.split(",").map((entry) => entry.trim()));
  if (!parsed.ok) {
    throw new Error(
      `--chart-kinds: ${parsed.unknown.join(", ")} cannot be rendered by charts; choose from ` +
        renderableChartKinds.map(chartKindName).join(","),
    );
  }
  return parsed.kinds;
}

/** `ClusterIP,LoadBalancer` → types (ClusterIP always among them); unset → ClusterIP only. */
function chartServiceTypes(value: string | undefined): readonly ChartServiceType[] {
  if (value === undefined || value.trim() === "") return defaultChartServiceTypes;
  const parsed = parseChartServiceTypes(value.split(",").map((entry) => entry.trim()));
  if (!parsed.ok) {
    throw new Error(
      `--chart-service-types: ${parsed.unknown.join(", ")} are not Service types; choose from ${serviceTypes.join(",")}`,
    );
  }
  return parsed.types;
}

/** `--render-memory`: MiB, at least what Go's runtime needs to start. */
function renderMemory(value: string | undefined): number {
  const mib = positiveInteger("--render-memory", value ?? String(defaultRenderLimits.memoryMiB));
  if (mib < minRenderMemoryMiB) {
    throw new Error(
      `--render-memory must be at least ${minRenderMemoryMiB} (MiB; helm's runtime needs ~64 to start), got ${mib}`,
    );
  }
  return mib;
}

/** `--chart-sources`: comma-separated URL prefixes; unset or empty: none (ConfigMap charts only). */
function chartSources(value: string | undefined): readonly string[] {
  const entries = (value ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const problems = chartSourceProblems(entries);
  if (problems.length > 0) throw new Error(`--chart-sources: ${problems.join("; ")}`);
  return entries;
}

/** `--default-chart`: a spec.chart as JSON, checked with the api's schema. */
function defaultChart(value: string | undefined): ChartSpec | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`--default-chart must be a spec.chart as JSON, got "${value}"`);
  }
  const result = chartSchema.safeParse(parsed);
  if (!result.success) {
    const issues = result.error.issues.map(
      (issue) => `spec.chart${issue.path.map((key) => `.${String(key)}`).join("")} ${issue.message}`,
    );
    throw new Error(`--default-chart: ${issues.join("; ")}`);
  }
  return result.data;
}
