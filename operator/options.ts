/**
 * Operator settings from flags, with MYAPP_* environment variables as fallbacks (flags win). Pure: argv and env
 * in, settings or a clear error out.
 */
import { isIP } from "node:net";
import { parseArgs } from "node:util";
import { maxTimerSeconds } from "../kube/clock.ts";
import type { Address } from "./runtime/manager.ts";
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
import { dns1123LabelRule, dns1123SubdomainRule, isDns1123Label, isDns1123Subdomain } from "../api/dns-names.ts";
import { defaultConcurrency, maxConcurrency } from "../api/operator-ranges.ts";
import {
  defaultMaxConcurrentRenders,
  maxConcurrentRendersLimit,
  defaultRenderLimits,
  maxRenderTimeoutSeconds,
  minRenderMemoryMiB,
  type RenderLimits,
} from "../chart/render-limits.ts";
import { chartSourceProblems, chartSourcesWithDefault, normalizePrefix } from "../chart/source-policy.ts";
import {
  maxCertValidityHours,
  parseAllowedRegistries,
  parseCertValidity,
  parseSecretReference,
  parseWebhookHosts,
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

/** The slow lane waits its interval plus up to 10 % (operator/runtime/controller.ts), which must fit a timer too. */
const maxSlowRetrySeconds = Math.floor(maxTimerSeconds / 1.1);

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
  --concurrency=N                  reconciles at once, never two of one key (default ${defaultConcurrency}, at most ${maxConcurrency})  MYAPP_CONCURRENCY
  --max-consecutive-failures=N     fast retries before an instance is marked Stalled (default 15)
  --slow-retry-interval=SECONDS    then retry this often (±10 %) until it succeeds; also how often a verdict
                                   caused outside the spec (a name taken, a quota, a namespace's chart sources) is
                                   looked at again (default 300, at most ${maxSlowRetrySeconds})
  --resync-period=SECONDS          re-reconcile everything this often (default 36000: 10 h, as controller-runtime;
                                   at most ${maxTimerSeconds}: 24.8 days, the longest timer Node keeps)
  --kubeconfig=PATH                credentials (default: KUBECONFIG's files, ~/.kube/config, else in-cluster)
  --helm=PATH                      helm binary that renders spec.chart (default: helm on PATH)  MYAPP_HELM
  --default-chart=JSON              chart for instances without spec.chart, e.g. {"oci":"oci://r/c","version":"1.0.0"}  MYAPP_DEFAULT_CHART
  --max-concurrent-renders=N       helm renders at once (default ${defaultMaxConcurrentRenders}, at most ${maxConcurrentRendersLimit})  MYAPP_MAX_CONCURRENT_RENDERS
  --render-memory=MIB              memory one render may use (default ${defaultRenderLimits.memoryMiB})  MYAPP_RENDER_MEMORY
  --render-cpu=SECONDS             CPU time one render may use (default ${defaultRenderLimits.cpuSeconds})  MYAPP_RENDER_CPU
  --render-timeout=SECONDS         wall time of one render (default ${defaultRenderLimits.timeoutSeconds}, at most ${maxRenderTimeoutSeconds})  MYAPP_RENDER_TIMEOUT
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
Admission webhook (the other --webhook-* flags need --webhook-bind-address):
  --webhook-bind-address=[H]:P     serve the webhooks over HTTPS here (default: no webhook server)  MYAPP_WEBHOOK_BIND_ADDRESS
  --webhook-cert-secret=NS/NAME    the Secret with its CA and certificate               MYAPP_WEBHOOK_CERT_SECRET
                                   (default <POD_NAMESPACE or default>/myapp-operator-webhook-cert)
  --webhook-configuration=NAME     the Validating- and MutatingWebhookConfiguration that get the CA bundle
                                   (default myapp-operator)                            MYAPP_WEBHOOK_CONFIGURATION
  --webhook-hosts=a,b              the certificate's DNS names and IPs (default localhost,127.0.0.1)  MYAPP_WEBHOOK_HOSTS
  --webhook-cert-validity=DURATION serving certificate lifetime, e.g. 2160h, 60s      MYAPP_WEBHOOK_CERT_VALIDITY
                                   (default 2160h: 90 days, at most ${maxCertValidityHours}h; the CA lives 10x as long)
  --webhook-cert-issuer=operator|external  who keeps the Secret: the operator (creates, rotates), or another issuer
                                   such as cert-manager (tls.crt, tls.key, ca.crt; only read; default operator)
                                                                                       MYAPP_WEBHOOK_CERT_ISSUER
  --webhook-defaults=webhook|policy who applies namespace defaults: the mutating webhook, or a MutatingAdmissionPolicy
                                   in the apiserver (no /mutate, no MutatingWebhookConfiguration; default webhook)
                                                                                       MYAPP_WEBHOOK_DEFAULTS
A MYAPP_* variable stands in for its flag (the flag wins); the boolean ones take true or false (or 1 or 0).`;

const logLevels = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

const webhookFlags = [
  "webhook-bind-address",
  "webhook-cert-secret",
  "webhook-configuration",
  "webhook-hosts",
  "webhook-cert-validity",
  "webhook-defaults",
  "webhook-cert-issuer",
] as const;

/** Flags a MYAPP_* variable stands in for (`--log-level`: MYAPP_LOG_LEVEL); the others are read from argv only. */
const flagsWithVariables: ReadonlySet<string> = new Set([
  "namespaces",
  "leader-elect",
  "metrics-bind-address",
  "metrics-secure",
  "health-probe-bind-address",
  "log-level",
  "concurrency",
  "helm",
  "chart-kinds",
  "chart-service-types",
  "default-chart",
  "max-concurrent-renders",
  "render-memory",
  "render-cpu",
  "render-timeout",
  "render-output",
  "render-objects",
  "render-values",
  "chart-sources",
  "allowed-registries",
  "max-replicas",
  "max-storage",
  "namespace-max-instances",
  "namespace-max-replicas",
  "namespace-max-storage",
  "require-expandable-storage",
  ...webhookFlags,
]);

/** The MYAPP_* variable that stands in for `flag` (`--log-level` or `log-level`), or undefined when none does. */
export function flagVariable(flag: string): string | undefined {
  const name = flag.replace(/^--/, "");
  return flagsWithVariables.has(name) ? `MYAPP_${name.toUpperCase().replaceAll("-", "_")}` : undefined;
}

/** A setting as given: its text, and what messages call it (the flag, or the variable it came from). */
interface Given {
  readonly text: string;
  readonly name: string;
}

type FlagValues = Readonly<Record<string, string | boolean | undefined>>;

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
  const read = (flag: string) => given(values, env, flag);
  const orDefault = (flag: string, fallback: string): Given => read(flag) ?? { text: fallback, name: `--${flag}` };
  const logLevel = orDefault("log-level", "info");
  if (!logLevels.includes(logLevel.text)) {
    throw new Error(`${logLevel.name} must be one of ${logLevels.join(", ")}, got "${logLevel.text}"`);
  }
  const sources = chartSources(read("chart-sources"));
  const chart = defaultChart(read("default-chart"));
  // Localhost by default: unauthenticated metrics must not be reachable from the pod network unless asked.
  const metrics = listener(orDefault("metrics-bind-address", "127.0.0.1:8080"));
  const probe = listener(orDefault("health-probe-bind-address", ":8081"));
  const metricsSecure = flagOrVariable(values, env, "metrics-secure");
  if (sharePort(metrics.address, probe.address)) {
    const same = metrics.address.host === probe.address.host;
    // One address would be one server, and the probes' is plain HTTP (the kubelet probes without TLS or a token).
    if (metricsSecure) {
      throw new Error(
        "--metrics-secure serves /metrics over HTTPS on a port of its own: --metrics-bind-address must differ from " +
          `--health-probe-bind-address, got ${same ? `${shown(metrics.address)} for both` : `${shown(metrics.address)} and ${shown(probe.address)}`}`,
      );
    }
    // One host and port is one server for both; a host and a wildcard on one port are two, and the second fails.
    if (!same) {
      throw new Error(
        `${metrics.shown} and ${probe.shown} would both listen on port ${metrics.address.port}: give them one ` +
          "address (one server serves both) or two ports",
      );
    }
  }
  const renderLimits: RenderLimits = {
    memoryMiB: renderMemory(orDefault("render-memory", String(defaultRenderLimits.memoryMiB))),
    cpuSeconds: positiveInteger(orDefault("render-cpu", String(defaultRenderLimits.cpuSeconds))),
    // A render's wall time is a timer (chart/guest-process.ts).
    timeoutSeconds: positiveInteger(
      orDefault("render-timeout", String(defaultRenderLimits.timeoutSeconds)),
      maxRenderTimeoutSeconds,
    ),
    outputMiB: positiveInteger(orDefault("render-output", String(defaultRenderLimits.outputMiB))),
    objects: positiveInteger(orDefault("render-objects", String(defaultRenderLimits.objects))),
    valuesKiB: positiveInteger(orDefault("render-values", String(defaultRenderLimits.valuesKiB))),
  };
  const registries = read("allowed-registries");
  const podNamespace: Given | undefined =
    env.POD_NAMESPACE === undefined
      ? undefined
      : { text: env.POD_NAMESPACE, name: "POD_NAMESPACE (the default of --leader-election-namespace)" };
  const kubeconfig = read("kubeconfig");
  const metricsCertDir = read("metrics-cert-dir");
  return {
    namespaces: namespaceList(read("namespaces")),
    leaderElect: flagOrVariable(values, env, "leader-elect"),
    leaderElectionNamespace: namespaceName(
      read("leader-election-namespace") ?? podNamespace ?? { text: "default", name: "--leader-election-namespace" },
    ),
    leaderElectionId: leaseName(orDefault("leader-election-id", "myapp-operator")),
    metricsAddress: metrics.address,
    metricsSecure,
    metricsCertDir:
      metricsCertDir &&
      nonEmpty(metricsCertDir, "a directory with tls.crt and tls.key (leave it out for plain HTTP /metrics)"),
    probeAddress: probe.address,
    logLevel: logLevel.text,
    // The MyAppOperator component's ranges (components/settings.ts, chart-limits.ts): a flag means what its
    // argument would.
    concurrency: positiveInteger(orDefault("concurrency", String(defaultConcurrency)), maxConcurrency),
    maxConsecutiveFailures: positiveInteger(orDefault("max-consecutive-failures", "15")),
    slowRetryIntervalMs: positiveInteger(orDefault("slow-retry-interval", "300"), maxSlowRetrySeconds) * 1000,
    resyncPeriodMs: positiveInteger(orDefault("resync-period", "36000"), maxTimerSeconds) * 1000,
    // KUBECONFIG is not a --kubeconfig: it may list several files, and missing ones are skipped (loadKubeConfig).
    kubeconfig:
      kubeconfig &&
      nonEmpty(kubeconfig, "a kubeconfig file (leave it out for KUBECONFIG, ~/.kube/config or the in-cluster config)"),
    kubeconfigList: env.KUBECONFIG || undefined,
    helm: nonEmpty(orDefault("helm", "helm"), "the helm binary (a path, or a command on PATH)"),
    chartKinds: chartKinds(read("chart-kinds")),
    chartServiceTypes: chartServiceTypes(read("chart-service-types")),
    defaultChart: chart,
    maxConcurrentRenders: positiveInteger(
      orDefault("max-concurrent-renders", String(defaultMaxConcurrentRenders)),
      maxConcurrentRendersLimit,
    ),
    renderLimits,
    chartSources: sources,
    policy: {
      allowedRegistries: parseAllowedRegistries(registries?.text, registries?.name),
      maxReplicas: optionalPositiveInteger(read("max-replicas")),
      maxStorage: storageLimit(read("max-storage")),
      namespaceBudget: withoutUndefined({
        instances: optionalPositiveInteger(read("namespace-max-instances")),
        replicas: optionalPositiveInteger(read("namespace-max-replicas")),
        storage: storageLimit(read("namespace-max-storage")),
      }),
      requireExpandableStorage: flagOrVariable(values, env, "require-expandable-storage"),
      maxValuesKiB: renderLimits.valuesKiB,
      // What the chart engine allows (chart-wiring.ts): the list, and the platform's own default chart's source.
      chartSources: chartSourcesWithDefault(sources, chart),
      ...(chart ? { defaultChart: chart } : {}),
    },
    webhook: webhookOptions(read, env, [metrics, probe]),
  };
}

/** `--help` or `-h`: print the usage and exit 0 (thrown so that no other flag is checked first). */
export class UsageRequested extends Error {}

/** `--version`: print the version and exit 0. */
export class VersionRequested extends Error {}

/** The flag's value, else its MYAPP_* variable's (named in messages as where the value came from), else undefined. */
function given(values: FlagValues, env: NodeJS.ProcessEnv, flag: string): Given | undefined {
  const value = values[flag];
  if (typeof value === "string") return { text: value, name: `--${flag}` };
  const variable = flagVariable(flag);
  const text = variable === undefined ? undefined : env[variable];
  return text === undefined ? undefined : { text, name: `${variable} (--${flag})` };
}

/**
 * A boolean flag, else its variable: true or false in any case, or 1 or 0 (as Go's strconv.ParseBool reads them
 * and container specs often write them; neither can be misread). Anything else is refused: "yes" or "on" read as
 * false would turn leader election or the metrics' authentication off without a word.
 */
function flagOrVariable(values: FlagValues, env: NodeJS.ProcessEnv, flag: string): boolean {
  if (values[flag] === true) return true;
  const variable = flagVariable(flag);
  const text = variable === undefined ? undefined : env[variable];
  if (text === undefined) return false;
  const word = text.toLowerCase();
  if (word === "true" || word === "1") return true;
  if (word === "false" || word === "0") return false;
  throw new Error(`${variable} (--${flag}) must be true or false (or 1 or 0), got "${text}"`);
}

/** A bind address, and how messages show it: as given, with the flag or variable it came from. */
interface Listener {
  readonly address: Address;
  readonly shown: string;
}

function listener(setting: Given): Listener {
  return { address: address(setting), shown: `${setting.name} "${setting.text}"` };
}

/**
 * `host:port`, the host empty for every interface, an IPv4 address, [an IPv6 address] or a host name. A bare port
 * is refused rather than guessed: it would listen on every interface, where --metrics-bind-address's default is
 * this machine only.
 */
function address({ text, name }: Given): Address {
  const match = /^(.*):(\d{1,5})$/.exec(text);
  const host = match ? listenHost(match[1] ?? "") : undefined;
  const port = Number(match?.[2]);
  if (host === undefined || port > 65535) {
    const example = /^\d{1,5}$/.test(text) && Number(text) <= 65535 ? text : "8080";
    throw new Error(
      `${name} must be [host]:port with a port from 0 to 65535, such as :${example} (every interface) or ` +
        `127.0.0.1:${example} (this machine only), got "${text}"`,
    );
  }
  return { host, port };
}

const hostName = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/i;

/** The host a listener binds, or undefined when `text` is none: empty is every interface; IPv6 comes in brackets. */
function listenHost(text: string): string | undefined {
  if (text === "") return "0.0.0.0";
  if (text.startsWith("[") && text.endsWith("]")) return isIP(text.slice(1, -1)) === 6 ? text.slice(1, -1) : undefined;
  return isIP(text) === 4 || hostName.test(text) ? text : undefined;
}

/** Whether two listeners claim one port: the same one (0 picks a free one each), on one host or a wildcard. */
function sharePort(a: Address, b: Address): boolean {
  const everywhere = (host: string) => host === "0.0.0.0" || host === "::";
  return a.port !== 0 && a.port === b.port && (a.host === b.host || everywhere(a.host) || everywhere(b.host));
}

function shown({ host, port }: Address): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

const namespaceRule = dns1123LabelRule;
const isNamespaceName = isDns1123Label;

/** `--namespaces=a,b`: namespace names, each once; unset or empty: every namespace. */
function namespaceList(setting: Given | undefined): readonly string[] {
  const names = (setting?.text ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const bad = names.filter((name) => !isNamespaceName(name));
  if (setting && bad.length > 0) {
    throw new Error(
      `${setting.name}: ${bad.map((name) => `"${name}"`).join(", ")} ${bad.length === 1 ? "is not a namespace name" : "are not namespace names"} (${namespaceRule})`,
    );
  }
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (setting && twice !== undefined) throw new Error(`${setting.name}: "${twice}" is listed twice; list it once`);
  return names;
}

function namespaceName({ text, name }: Given): string {
  if (!isNamespaceName(text)) throw new Error(`${name} must be a namespace name (${namespaceRule}), got "${text}"`);
  return text;
}

/** A Lease's name, which the apiserver holds to a DNS-1123 subdomain. */
function leaseName({ text, name }: Given): string {
  if (!isDns1123Subdomain(text))
    throw new Error(`${name} must be a Lease name: ${dns1123SubdomainRule}, got "${text}"`);
  return text;
}

/** A path or a command: empty would silently mean the default, or nothing. */
function nonEmpty({ text, name }: Given, what: string): string {
  if (text.trim() === "") throw new Error(`${name} must name ${what}, got "${text}"`);
  return text;
}

/**
 * The webhook's settings, or undefined without `--webhook-bind-address`. The other webhook flags are checked
 * either way, and refused without it: they would configure a server that never starts.
 */
function webhookOptions(
  read: (flag: string) => Given | undefined,
  env: NodeJS.ProcessEnv,
  listeners: readonly Listener[],
): WebhookOptions | undefined {
  const orDefault = (flag: string, fallback: string): Given => read(flag) ?? { text: fallback, name: `--${flag}` };
  const configuration = orDefault("webhook-configuration", "myapp-operator");
  if (!isDns1123Subdomain(configuration.text)) {
    throw new Error(
      `${configuration.name} must name the webhook configurations: ${dns1123SubdomainRule}, got "${configuration.text}"`,
    );
  }
  const defaults = orDefault("webhook-defaults", "webhook");
  if (defaults.text !== "webhook" && defaults.text !== "policy") {
    throw new Error(`${defaults.name} must be webhook or policy, got "${defaults.text}"`);
  }
  const certIssuer = orDefault("webhook-cert-issuer", "operator");
  if (certIssuer.text !== "operator" && certIssuer.text !== "external") {
    throw new Error(`${certIssuer.name} must be operator or external, got "${certIssuer.text}"`);
  }
  const secret = read("webhook-cert-secret") ?? {
    text: `${env.POD_NAMESPACE ?? "default"}/myapp-operator-webhook-cert`,
    name:
      env.POD_NAMESPACE === undefined
        ? "--webhook-cert-secret"
        : "POD_NAMESPACE (the default of --webhook-cert-secret)",
  };
  const certSecret = parseSecretReference(secret.name, secret.text);
  const hostList = orDefault("webhook-hosts", "localhost,127.0.0.1");
  const hosts = parseWebhookHosts(hostList.name, hostList.text);
  const validity = orDefault("webhook-cert-validity", "2160h");
  const certValidityMs = parseCertValidity(validity.name, validity.text);
  const bind = read("webhook-bind-address");
  if (bind === undefined) {
    const set = webhookFlags.flatMap((flag) => read(flag) ?? []);
    if (set.length > 0) {
      throw new Error(
        `${set.map((setting) => setting.name).join(", ")} ${set.length === 1 ? "configures" : "configure"} the ` +
          "admission webhook server, which only --webhook-bind-address starts: set it (such as " +
          `--webhook-bind-address=:9443) or leave ${set.length === 1 ? "that setting" : "those settings"} out`,
      );
    }
    return undefined;
  }
  const server = listener(bind);
  // The webhooks' server is one of its own (HTTPS), so its port cannot be the metrics' or the probes'.
  const taken = listeners.find((other) => sharePort(server.address, other.address));
  if (taken) {
    throw new Error(
      `${server.shown} would listen on the port of ${taken.shown}: give the webhook server a port of its own`,
    );
  }
  return {
    address: server.address,
    certSecret,
    configuration: configuration.text,
    hosts,
    certValidityMs,
    defaults: defaults.text,
    certIssuer: certIssuer.text,
  };
}

/** A positive integer, or undefined when unset or empty (no limit). */
function optionalPositiveInteger(setting: Given | undefined): number | undefined {
  return setting === undefined || setting.text.trim() === "" ? undefined : positiveInteger(setting);
}

/** `--max-storage` and `--namespace-max-storage`: a quantity, or undefined when unset or empty (no limit). */
function storageLimit(setting: Given | undefined): string | undefined {
  return setting && storageLimitFlag(setting.name, setting.text);
}

/** The object without its undefined members: a budget left unset is absent, so `{}` reads as "no budget". */
function withoutUndefined<T extends object>(object: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/** A whole number from 1 to `max`, in decimal digits: Number() alone would take 0x10, 1e3 and " 3 " too. */
function positiveInteger({ text, name }: Given, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (n >= 1 && n <= max) return n;
  const allowed = max < Number.MAX_SAFE_INTEGER || n > max ? `an integer from 1 to ${max}` : "a positive integer";
  throw new Error(`${name} must be ${allowed}, got "${text}"`);
}

/**
 * A comma-separated list's entries, trimmed, empty ones dropped (`a,,b` is `a,b`; `,` is none), each once: a repeat
 * is refused as `--namespaces` refuses one, compared as `key` reads an entry.
 */
function listEntries(setting: Given | undefined, key: (entry: string) => string = (entry) => entry): string[] {
  const entries = (setting?.text ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const keys = entries.map(key);
  const twice = keys.findIndex((entry, i) => keys.indexOf(entry) !== i);
  if (setting && twice !== -1) {
    const entry = entries[twice] ?? "";
    const as = keys[twice] === entry ? "" : ` (as ${keys[twice]})`;
    throw new Error(`${setting.name}: "${entry}" is listed twice${as}; list it once`);
  }
  return entries;
}

/**
 * `apps/v1/Deployment,v1/Service` → kinds; unset or no entry (empty, or only commas) → the built-in template's kinds
 * (wider kinds are opt-in). The MyAppOperator component writes no flag for those, and refuses `chartKinds: []`.
 */
function chartKinds(setting: Given | undefined): readonly ChartKind[] {
  const entries = listEntries(setting);
  if (setting === undefined || entries.length === 0) return defaultChartKinds;
  const parsed = parseChartKinds(entries);
  if (!parsed.ok) {
    throw new Error(
      `${setting.name}: ${parsed.unknown.join(", ")} cannot be rendered by charts; choose from ` +
        renderableChartKinds.map(chartKindName).join(","),
    );
  }
  return parsed.kinds;
}

/** `ClusterIP,LoadBalancer` → types (ClusterIP always among them); unset or no entry → ClusterIP only. */
function chartServiceTypes(setting: Given | undefined): readonly ChartServiceType[] {
  const entries = listEntries(setting);
  if (setting === undefined || entries.length === 0) return defaultChartServiceTypes;
  const parsed = parseChartServiceTypes(entries);
  if (!parsed.ok) {
    throw new Error(
      `${setting.name}: ${parsed.unknown.join(", ")} are not Service types; choose from ${serviceTypes.join(",")}`,
    );
  }
  return parsed.types;
}

/** `--render-memory`: MiB, at least what Go's runtime needs to start. */
function renderMemory(setting: Given): number {
  const mib = positiveInteger(setting);
  if (mib < minRenderMemoryMiB) {
    throw new Error(
      `${setting.name} must be at least ${minRenderMemoryMiB} (MiB; helm's runtime needs ~64 to start), got ${mib}`,
    );
  }
  return mib;
}

/** `--chart-sources`: comma-separated URL prefixes; unset or empty: none (ConfigMap charts only). */
function chartSources(setting: Given | undefined): readonly string[] {
  // One prefix written twice (`oci://r/a` and `oci://R/a/` are the same one) is a repeat.
  const entries = listEntries(setting, normalizePrefix);
  const problems = chartSourceProblems(entries);
  if (setting && problems.length > 0) throw new Error(`${setting.name}: ${problems.join("; ")}`);
  return entries;
}

/** `--default-chart`: a spec.chart as JSON, checked with the api's schema. */
function defaultChart(setting: Given | undefined): ChartSpec | undefined {
  if (setting === undefined || setting.text.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(setting.text);
  } catch {
    throw new Error(`${setting.name} must be a spec.chart as JSON, got "${setting.text}"`);
  }
  const result = chartSchema.safeParse(parsed);
  if (!result.success) {
    const issues = result.error.issues.map(
      (issue) => `spec.chart${issue.path.map((key) => `.${String(key)}`).join("")} ${issue.message}`,
    );
    throw new Error(`${setting.name}: ${issues.join("; ")}`);
  }
  return result.data;
}
