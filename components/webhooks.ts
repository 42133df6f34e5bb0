/**
 * The operator's admission webhooks for MyAppInstance: a ValidatingWebhookConfiguration that enforces the
 * platform policy (platform-policy.ts, chart sources, what CEL cannot see) and a MutatingWebhookConfiguration that
 * applies namespace-dependent defaults, both served by every operator replica over HTTPS (operator/admission/).
 * The operator makes its own CA and serving certificate, keeps them in one Secret of its namespace and injects the
 * CA into these configurations (`caBundle` is deliberately left out here, so Pulumi never fights it).
 *
 * Failure is designed:
 * - `failurePolicy: Fail`. A policy that anyone can bypass by waiting for (or causing) an operator outage is no
 *   policy, and budgets are exactly what a tenant would like to bypass. While no replica answers, creating an
 *   instance or changing its spec fails with the apiserver's "failed calling webhook" error; everything else goes
 *   on (below), and `pulumi up` retries its apply while it waits (provider/).
 * - `timeoutSeconds: 5`: answers come from the replica's cache in milliseconds; a hung replica should cost a
 *   `kubectl apply` seconds, not the default ten.
 * - `matchConditions`: the operator's own ServiceAccount (finalizers, and nothing else of it matches anyway) and
 *   kube-system's controllers never wait on it, and neither does an update that leaves `spec` alone (labels,
 *   annotations, finalizers: a stuck instance can always be released, even with every replica down). Deletes are
 *   not matched at all.
 * - `myappinstances/scale` is matched too: `kubectl scale` must not step around maxReplicas or a budget.
 *
 * The admission policy of admission-policy.ts matches the operator's writes of children; these match users'
 * writes of instances: the two never judge the same request.
 */
import { isIP } from "node:net";
import { group, namespaceBudgetLabels, plural } from "../api/index.ts";
import { dns1123SubdomainRule, isDns1123Subdomain } from "../api/dns-names.ts";
import type {
  MutatingWebhookConfigurationManifest,
  ServiceManifest,
  ValidatingWebhookConfigurationManifest,
} from "./manifest-types.ts";
import { objectMeta, operatorObjectNames, selectorLabels } from "./metadata.ts";
import { mutatePath, validatePath, webhookPort } from "./operator-endpoints.ts";
import { namespaceReadRules, type OperatorRule } from "./rbac-rules.ts";
import type { OperatorPlacement, OperatorSettings, SettingsIssue } from "./settings.ts";

/** Arguments of the webhooks. */
export interface WebhookArgs {
  /**
   * Serve the webhooks. Off, nothing checks the platform policy, so `policy` then must be left out.
   * @default true in-cluster; for an external operator, true when `url` is given
   */
  readonly enabled?: boolean;
  /**
   * External operator only: where the apiserver reaches the operator process's webhook server, `https://HOST:PORT`
   * (HOST is put in the serving certificate; the operator listens on PORT, on 127.0.0.1 for 127.0.0.1 or localhost,
   * on [::1] for [::1], and on every interface otherwise). PORT is from 1 to 65535 (443 may be written), clear of the
   * ports the operator serves metrics (127.0.0.1:8080) and probes (:8081) on unless told otherwise.
   * @example "https://127.0.0.1:9443"
   */
  readonly url?: string;
  /**
   * What gives an instance its namespace's defaults (`spec.podSecurityLevel` from the namespace's Pod Security
   * label): `"webhook"`, the operator's mutating webhook (every Kubernetes version); `"policy"`, a
   * MutatingAdmissionPolicy the apiserver evaluates itself (Kubernetes 1.36+, where it is GA): no call to the
   * operator, so a write in such a namespace costs about a third as much and gets its default while no replica
   * runs (defaults-policy.ts); `"auto"`, the webhook, and the policy beside it when the component sees that the
   * cluster serves it (cluster-admission-apis.ts): the policy runs first, so the webhook is called only where the
   * policy is missing. A cluster the component cannot read at preview gets the webhook alone in that run.
   * @default "auto"
   */
  readonly defaults?: NamespaceDefaults;
  /**
   * Have cert-manager issue the serving certificate instead of the operator: the component declares a cert-manager
   * `Certificate` whose Secret is `NAME-webhook-cert` (cert-manager and its CRDs must be installed), and the operator
   * only reads that Secret (`--webhook-cert-issuer=external`), serves it, reloads it when cert-manager renews it and
   * injects its `ca.crt`. The issuer must fill `ca.crt` (a CA or self-signed issuer does; ACME does not).
   * @example { issuer: "platform-ca", kind: "ClusterIssuer" }
   */
  readonly certManager?: CertManagerArgs;
}

/** The cert-manager issuer of the webhook's certificate. */
export interface CertManagerArgs {
  /** The Issuer (in the operator's namespace) or ClusterIssuer's name. */
  readonly issuer: string;
  /** @default "Issuer" */
  readonly kind?: "Issuer" | "ClusterIssuer";
}

/** What applies namespace-dependent defaults, see {@link WebhookArgs.defaults}. */
export type NamespaceDefaults = "webhook" | "policy" | "auto";

/** Whether the operator's mutating webhook is installed and served: with `"webhook"` and `"auto"`. */
export function mutatingWebhookServes(defaults: NamespaceDefaults): boolean {
  return defaults !== "policy";
}

/** The webhooks, resolved. */
export interface WebhookSettings {
  readonly enabled: boolean;
  /** External operator: the URL's origin (`https://host:port`). */
  readonly url: string | undefined;
  readonly defaults: NamespaceDefaults;
  /** Set: cert-manager issues the certificate. */
  readonly certManager: { readonly issuer: string; readonly kind: "Issuer" | "ClusterIssuer" } | undefined;
}

/** The admission timeout of both webhooks (see the file's comment). */
export const webhookTimeoutSeconds = 5;

/** Resolves `webhooks` for the placement, naming what is wrong. */
export function resolveWebhooks(
  args: WebhookArgs | undefined,
  placement: OperatorPlacement,
): { ok: true; webhooks: WebhookSettings } | { ok: false; issues: SettingsIssue[] } {
  const resolved = resolveWhere(args, placement);
  if (!resolved.ok) return resolved;
  const defaults = args?.defaults ?? "auto";
  if (defaults !== "webhook" && defaults !== "policy" && defaults !== "auto") {
    return {
      ok: false,
      issues: [
        {
          field: "webhooks.defaults",
          message: `must be "auto", "webhook" or "policy", got ${JSON.stringify(defaults)}`,
        },
      ],
    };
  }
  if (defaults === "policy" && !resolved.where.enabled) {
    return {
      ok: false,
      issues: [
        {
          field: "webhooks.defaults",
          message: 'is part of the platform\'s admission, which is off: turn the webhooks on or leave "policy" out',
        },
      ],
    };
  }
  const certManager = resolveCertManager(args?.certManager, resolved.where.enabled);
  if (!certManager.ok) return certManager;
  return { ok: true, webhooks: { ...resolved.where, defaults, certManager: certManager.certManager } };
}

function resolveCertManager(
  args: CertManagerArgs | undefined,
  enabled: boolean,
): { ok: true; certManager: WebhookSettings["certManager"] } | { ok: false; issues: SettingsIssue[] } {
  if (args === undefined) return { ok: true, certManager: undefined };
  const issue = (field: string, message: string) => ({ ok: false as const, issues: [{ field, message }] });
  if (!enabled) return issue("webhooks.certManager", "issues the webhooks' certificate, which are off");
  const issuer = typeof args.issuer === "string" ? args.issuer.trim() : "";
  if (!isDns1123Subdomain(issuer)) {
    return issue(
      "webhooks.certManager.issuer",
      `must be the name of a cert-manager issuer (${dns1123SubdomainRule}), got ${JSON.stringify(args.issuer)}`,
    );
  }
  const kind = args.kind ?? "Issuer";
  if (kind !== "Issuer" && kind !== "ClusterIssuer") {
    return issue("webhooks.certManager.kind", `must be "Issuer" or "ClusterIssuer", got ${JSON.stringify(kind)}`);
  }
  return { ok: true, certManager: { issuer, kind } };
}

/** Whether the webhooks are on and where the apiserver reaches them. */
function resolveWhere(
  args: WebhookArgs | undefined,
  placement: OperatorPlacement,
): { ok: true; where: Omit<WebhookSettings, "defaults" | "certManager"> } | { ok: false; issues: SettingsIssue[] } {
  const url = args?.url?.trim() || undefined;
  if (placement === "in-cluster") {
    if (url !== undefined) {
      return {
        ok: false,
        issues: [
          { field: "webhooks.url", message: "is for an external operator; in-cluster the webhook Service is used" },
        ],
      };
    }
    return { ok: true, where: { enabled: args?.enabled ?? true, url: undefined } };
  }
  const enabled = args?.enabled ?? url !== undefined;
  if (!enabled && url !== undefined) {
    return {
      ok: false,
      issues: [
        {
          field: "webhooks.url",
          message: "is where the webhooks listen, which enabled: false turns off: leave one out",
        },
      ],
    };
  }
  if (!enabled) return { ok: true, where: { enabled, url: undefined } };
  if (url === undefined) {
    return {
      ok: false,
      issues: [
        {
          field: "webhooks.url",
          message:
            'is required for an external operator\'s webhooks: where the apiserver reaches it, e.g. "https://127.0.0.1:9443"',
        },
      ],
    };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, issues: [{ field: "webhooks.url", message: `"${url}" is not a URL; use https://HOST:PORT` }] };
  }
  const issue = (message: string) => ({ ok: false as const, issues: [{ field: "webhooks.url", message }] });
  // The URL drops https's own port 443 (`new URL("https://h:443").port` is ""): an explicit one is read as written.
  const port = parsed.port || (/^https:\/\/[^/?#@]*:0*443\/?$/i.test(url) ? "443" : "");
  if (
    parsed.protocol !== "https:" ||
    !port ||
    parsed.pathname !== "/" ||
    parsed.search ||
    parsed.hash ||
    parsed.username ||
    parsed.password
  ) {
    return issue(`"${url}" must be https://HOST:PORT, with a port and nothing after it`);
  }
  // Port 0 would have the operator listen on a port the apiserver is never told.
  if (port === "0") return issue(`"${url}" must name a port from 1 to 65535, got 0`);
  // The host goes into the serving certificate (--webhook-hosts, a comma-separated list): a DNS name or an IP.
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0 && !isDns1123Subdomain(host)) {
    return issue(
      `"${url}" must name its host as a DNS name (lower-case letters, digits, '-' and '.') or an IP address`,
    );
  }
  const bind = externalBindAddress(parsed);
  const clash = externalOperatorListeners.find((other) => sharePort(bind, other));
  if (clash) {
    return issue(
      `"${url}" has the operator listen on ${shownAddress(bind)}, the port of its ${clash.what} ` +
        `(${clash.flag}, ${shownAddress(clash)} unless its command line says otherwise), so it would refuse to ` +
        `start: choose another port, such as ${webhookPort}`,
    );
  }
  return { ok: true, where: { enabled, url: parsed.origin } };
}

/** A host and port the operator listens on: the host without brackets, "0.0.0.0" or "::" for every interface. */
interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Where the operator started with {@link externalOperatorFlags} listens besides the webhooks: its own defaults
 * (operator/options.ts; components may not import it, and the unit tests check that the two agree), since those
 * flags leave metrics and probes to the process. A webhook URL on one of these ports is refused here rather than
 * answered with other addresses in the flags: the flags would then choose ports the user did not, and could meet
 * another of their services; the message names the clash and a port that has none.
 */
const externalOperatorListeners: readonly (ListenAddress & { what: string; flag: string })[] = [
  { host: "127.0.0.1", port: 8080, what: "metrics", flag: "--metrics-bind-address" },
  { host: "0.0.0.0", port: 8081, what: "health probes", flag: "--health-probe-bind-address" },
];

/**
 * Where an external operator listens for the URL the apiserver calls: on the loopback address the URL names
 * (127.0.0.1 for localhost; [::1] for [::1], where 127.0.0.1 would leave the apiserver's calls unanswered), on
 * every IPv6 and IPv4 interface for another IPv6 address, and on every IPv4 interface otherwise.
 */
function externalBindAddress(url: URL): ListenAddress {
  const port = Number(url.port || "443");
  if (url.hostname === "[::1]") return { host: "::1", port };
  if (url.hostname === "127.0.0.1" || url.hostname === "localhost") return { host: "127.0.0.1", port };
  return { host: url.hostname.startsWith("[") ? "::" : "0.0.0.0", port };
}

/** As the operator judges two of its listeners (operator/options.ts `sharePort`): one port, on one host or a wildcard. */
function sharePort(a: ListenAddress, b: ListenAddress): boolean {
  const everywhere = (host: string) => host === "0.0.0.0" || host === "::";
  return a.port === b.port && (a.host === b.host || everywhere(a.host) || everywhere(b.host));
}

/** `--webhook-bind-address`'s form of an address: `[::1]:9443`, `127.0.0.1:9443`, `:9443` for every IPv4 interface. */
function shownAddress({ host, port }: ListenAddress): string {
  if (host === "0.0.0.0") return `:${port}`;
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** The operator's webhook flags (operator/options.ts parses them). */
export function webhookFlags(settings: OperatorSettings): string[] {
  const { webhooks } = settings;
  if (!webhooks.enabled) return [];
  const names = operatorObjectNames(settings);
  const external = webhooks.url === undefined ? undefined : externalBindAddress(new URL(webhooks.url));
  const hosts = webhookHosts(settings);
  return [
    `--webhook-bind-address=${external ? shownAddress(external) : `:${webhookPort}`}`,
    `--webhook-cert-secret=${settings.namespace}/${names.webhookCertificate}`,
    `--webhook-configuration=${names.webhookConfiguration}`,
    `--webhook-hosts=${hosts.join(",")}`,
    ...(webhooks.defaults === "policy" ? ["--webhook-defaults=policy"] : []),
    ...(webhooks.certManager ? ["--webhook-cert-issuer=external"] : []),
  ];
}

/** The names the serving certificate carries: the webhook Service's in the cluster, the URL's host outside it. */
export function webhookHosts(settings: OperatorSettings): string[] {
  if (settings.webhooks.url !== undefined) return [new URL(settings.webhooks.url).hostname.replace(/^\[|\]$/g, "")];
  const service = `${operatorObjectNames(settings).webhookService}.${settings.namespace}.svc`;
  return [service, `${service}.cluster.local`];
}

/** The Service the apiserver calls an in-cluster operator's webhooks through; every ready replica serves. */
export function webhookService(settings: OperatorSettings): ServiceManifest | undefined {
  if (!settings.webhooks.enabled || settings.operatorPlacement !== "in-cluster") return undefined;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: objectMeta(settings, operatorObjectNames(settings).webhookService, settings.namespace),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(settings),
      ports: [{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }],
    },
  };
}

/**
 * Who and what the platform's admission judges, shared by the webhooks and instance-policy.ts: the watched
 * namespaces (every one but kube-system in cluster-wide mode), and writes that are neither the operator's own nor
 * kube-system's controllers' (but for a scale-up through `/scale`: the autoscaler's), and that change `spec` (a
 * stuck instance can always be released). `clauses` are the conditions on the write, which each configuration joins with its own into one
 * matchCondition.
 */
export function instanceAdmissionScope(settings: OperatorSettings): {
  namespaceSelector: { matchExpressions: { key: string; operator: string; values?: string[] }[] };
  clauses: readonly string[];
  matchConditions: { name: string; expression: string }[];
} {
  const operator = `system:serviceaccount:${settings.namespace}:${operatorObjectNames(settings).serviceAccount}`;
  const clauses = [
    // Not the operator's own writes (its finalizer).
    `request.userInfo.username != '${operator}'`,
    // Not kube-system's controllers (the garbage collector, the namespace controller), but for a scale-up through
    // `/scale`: the HorizontalPodAutoscaler controller runs there, and its scale writes carry what a tenant's own
    // autoscaler asks for, held to the same maximum and budget as `kubectl scale`. A scale-down never waits on a
    // webhook (a Scale leaves out replicas of 0).
    "(has(request.subResource) && request.subResource == 'scale' && " +
      "(has(object.spec.replicas) ? object.spec.replicas : 0) > " +
      "(oldObject != null && has(oldObject.spec) && has(oldObject.spec.replicas) ? oldObject.spec.replicas : 0)) || " +
      "(!request.userInfo.username.startsWith('system:serviceaccount:kube-system:') && " +
      "request.userInfo.username != 'system:kube-controller-manager')",
    // Only writes that change spec.
    "request.operation == 'CREATE' || !has(oldObject.spec) || !has(object.spec) || object.spec != oldObject.spec",
  ];
  return {
    namespaceSelector:
      settings.watchNamespaces.length > 0
        ? { matchExpressions: [{ key: namespaceNameLabel, operator: "In", values: [...settings.watchNamespaces] }] }
        : { matchExpressions: [{ key: namespaceNameLabel, operator: "NotIn", values: ["kube-system"] }] },
    clauses,
    matchConditions: [allOf("in-scope", clauses)],
  };
}

/**
 * One matchCondition that holds when every clause does. The apiserver evaluates each matchCondition as a CEL
 * program of its own, with its own cost tracking, on every write the selectors let through: one program per
 * configuration costs less than one per clause (bench/RESULTS.md, admission), and decides the same. The clause that
 * most often fails goes first: CEL stops at the first false one.
 */
export function allOf(name: string, clauses: readonly string[]): { name: string; expression: string } {
  return { name, expression: clauses.map((clause) => `(${clause})`).join(" && ") };
}

/**
 * An instance the first validating webhook judges in any namespace: one that names something the webhook must look
 * up (a volume's StorageClass, whether it can expand; a chart's source, its ConfigMap), or that carries
 * `spec.values`, whose size CEL cannot measure (chart/values-size.ts). A Scale has none of these.
 */
const needsTheWebhook =
  "(!has(request.subResource) || request.subResource == '') && has(object.spec) && " +
  "(has(object.spec.storage) || has(object.spec.storageClassName) || has(object.spec.chart) || " +
  "has(object.spec.values))";

/**
 * The namespaces where a budget applies, each picked by exactly one selector so that no write is judged twice:
 * every namespace when a flag sets a budget, otherwise those with a budget label (instances; else replicas; else
 * storage: namespaceSelector terms are ANDed, so "any of three labels" is three disjoint selectors).
 */
function budgetSelectors(
  settings: OperatorSettings,
  base: { key: string; operator: string; values?: string[] }[],
): { key: string; operator: string; values?: string[] }[][] {
  const budget = settings.policy?.namespaceBudget;
  if (budget && Object.values(budget).some((limit) => limit !== undefined)) return [base];
  const keys = Object.values(namespaceBudgetLabels);
  return keys.map((key, i) => [
    ...base,
    ...keys.slice(0, i).map((earlier) => ({ key: earlier, operator: "DoesNotExist" })),
    { key, operator: "Exists" },
  ]);
}

/**
 * The writes that get a namespace default (operator/admission/mutate.ts `defaultsFor`, whichever of the webhook or
 * defaults-policy.ts applies it): the admission's scope, narrowed to namespaces whose Pod Security label lets pods
 * run looser than Restricted, to instances that name no level, and, on an UPDATE, to those stored with the default
 * (re-applying a manifest that never names the level keeps it; an instance stored without it stays Restricted).
 * Every other write skips the default, and with the webhook, the call (bench/RESULTS.md, admission).
 */
export function namespaceDefaultsScope(settings: OperatorSettings): ReturnType<typeof instanceAdmissionScope> {
  const scope = instanceAdmissionScope(settings);
  const clauses = [
    // No level chosen.
    "has(object.spec) && !has(object.spec.podSecurityLevel)",
    // Created, or stored with the default.
    "request.operation == 'CREATE' || (oldObject != null && has(oldObject.spec) && " +
      `has(oldObject.spec.podSecurityLevel) && oldObject.spec.podSecurityLevel == '${namespaceDefaultLevel}')`,
    ...scope.clauses,
  ];
  return {
    namespaceSelector: {
      matchExpressions: [
        ...scope.namespaceSelector.matchExpressions,
        { key: podSecurityEnforceLabel, operator: "In", values: ["baseline", "privileged"] },
      ],
    },
    clauses,
    matchConditions: [allOf("in-scope-and-takes-the-default", clauses)],
  };
}

/** The level operator/admission/mutate.ts gives where the namespace enforces `baseline` or `privileged`. */
export const namespaceDefaultLevel = "Baseline";

/**
 * The webhook configurations, or undefined when the webhooks are off. The validating webhook is called only where
 * CEL cannot decide (instance-policy.ts decides the rest in the apiserver): for an instance that names a volume or
 * a chart or carries values, and, for any other write, only in a namespace where a budget applies. A write that needs neither costs
 * no call (bench/RESULTS.md, admission). The mutating one exists unless a policy alone gives the namespace
 * defaults (`webhooks.defaults: "policy"`).
 */
export function operatorWebhookConfigurations(
  settings: OperatorSettings,
):
  | { validating: ValidatingWebhookConfigurationManifest; mutating: MutatingWebhookConfigurationManifest | undefined }
  | undefined {
  if (!settings.webhooks.enabled) return undefined;
  const names = operatorObjectNames(settings);
  const clientConfig = (path: string) =>
    settings.webhooks.url !== undefined
      ? { url: `${settings.webhooks.url}${path}` }
      : { service: { namespace: settings.namespace, name: names.webhookService, path, port: 443 } };
  const rule = (resources: string[]) => ({
    apiGroups: [group],
    apiVersions: ["v1"],
    operations: ["CREATE", "UPDATE"],
    resources,
    scope: "Namespaced",
  });
  const scope = instanceAdmissionScope(settings);
  const common = {
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    failurePolicy: "Fail",
    matchPolicy: "Equivalent",
    timeoutSeconds: webhookTimeoutSeconds,
    namespaceSelector: scope.namespaceSelector,
    matchConditions: scope.matchConditions,
  };
  const validate = {
    clientConfig: clientConfig(validatePath),
    rules: [rule([plural, `${plural}/scale`])],
    ...common,
  };
  const budgetWebhooks = budgetSelectors(settings, scope.namespaceSelector.matchExpressions).map(
    (matchExpressions, i, all) => ({
      ...validate,
      name: all.length === 1 ? `budget.${plural}.${group}` : `budget-${i + 1}.${plural}.${group}`,
      namespaceSelector: { matchExpressions },
      // The first webhook judges these, budgets included.
      matchConditions: [allOf("in-scope-and-needs-only-a-budget", [`!(${needsTheWebhook})`, ...scope.clauses])],
    }),
  );
  const defaultsScope = namespaceDefaultsScope(settings);
  return {
    validating: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: objectMeta(settings, names.webhookConfiguration),
      webhooks: [
        {
          ...validate,
          name: `validate.${plural}.${group}`,
          matchConditions: [allOf("in-scope-and-needs-the-webhook", [needsTheWebhook, ...scope.clauses])],
        },
        ...budgetWebhooks,
      ],
    },
    mutating: mutatingWebhookServes(settings.webhooks.defaults)
      ? {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "MutatingWebhookConfiguration",
          metadata: objectMeta(settings, names.webhookConfiguration),
          webhooks: [
            {
              name: `default.${plural}.${group}`,
              clientConfig: clientConfig(mutatePath),
              rules: [rule([plural])],
              reinvocationPolicy: "Never",
              ...common,
              namespaceSelector: defaultsScope.namespaceSelector,
              matchConditions: defaultsScope.matchConditions,
            },
          ],
        }
      : undefined,
  };
}

/** Set on every namespace by the apiserver. */
const namespaceNameLabel = "kubernetes.io/metadata.name";
/** The namespace's Pod Security level, which the mutating webhook's default follows. */
const podSecurityEnforceLabel = "pod-security.kubernetes.io/enforce";

/**
 * In the operator's namespace: create the certificate Secret (create cannot be limited by name), then read and
 * patch only that one (each replica polls it, so every replica reloads a rotated certificate). When cert-manager
 * issues it, only reading that one.
 */
export function webhookCertificateRules(secretName: string, issuedByCertManager = false): readonly OperatorRule[] {
  if (issuedByCertManager)
    return [{ apiGroups: [""], resources: ["secrets"], resourceNames: [secretName], verbs: ["get"] }];
  return [
    { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
    { apiGroups: [""], resources: ["secrets"], resourceNames: [secretName], verbs: ["get", "patch"] },
  ];
}

/**
 * Cluster-scoped: inject the CA into the configurations (and no other; no mutating one when a policy gives the
 * defaults), and read the namespaces whose labels the webhooks read (only the watched ones in namespaced mode).
 */
export function webhookClusterRules(
  configuration: string,
  watchNamespaces: readonly string[],
  defaults: NamespaceDefaults,
): readonly OperatorRule[] {
  return [
    {
      apiGroups: ["admissionregistration.k8s.io"],
      resources: [
        "validatingwebhookconfigurations",
        ...(mutatingWebhookServes(defaults) ? ["mutatingwebhookconfigurations"] : []),
      ],
      resourceNames: [configuration],
      // watch: a webhook that `pulumi up` adds gets the CA at once (operator/admission/configuration-watch.ts).
      verbs: ["get", "patch", "watch"],
    },
    ...namespaceReadRules(watchNamespaces),
  ];
}
