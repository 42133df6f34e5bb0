/**
 * The admission settings: the platform owner's policy (what instances may be) and where the webhook serves, with
 * the pure parsing of their flags (`operator/options.ts` reads argv and env, this file says what a value means)
 * and of the namespace labels that replace a budget for one namespace. Image names are compared as
 * api/image-registry.ts reads them.
 */
import { isIP } from "node:net";
import { parseRegistryEntry, parseStorageLimit, type ChartSpec } from "../../api/index.ts";
import { isDns1123Label, isDns1123Subdomain } from "../../api/dns-names.ts";
import { parseObjectKey, type ObjectKey } from "../../kube/object-key.ts";

/** What the platform lets instances be: set by the platform owner (operator flags, MyAppOperator arguments). */
export interface PlatformPolicy {
  /** Image reference prefixes instances may use; empty: any. */
  readonly allowedRegistries: readonly string[];
  readonly maxReplicas: number | undefined;
  /** A Kubernetes quantity, e.g. "100Gi". */
  readonly maxStorage: string | undefined;
  readonly namespaceBudget: { readonly instances?: number; readonly replicas?: number; readonly storage?: string };
  readonly requireExpandableStorage: boolean;
  /** --chart-sources, shared with the chart engine. */
  readonly chartSources: readonly string[];
  /** The platform's own default chart (--default-chart): allowed in every namespace, whatever its annotation says. */
  readonly defaultChart?: ChartSpec;
  /** Largest `spec.values` in KiB of compact JSON (--render-values, shared with the cache); unset: any. */
  readonly maxValuesKiB?: number;
}

/** Where and how the admission webhook serves. */
export interface WebhookOptions {
  readonly address: { host: string; port: number };
  readonly certSecret: { namespace: string; name: string };
  readonly configuration: string;
  readonly hosts: readonly string[];
  readonly certValidityMs: number;
  /**
   * Who gives instances their namespace's defaults: the mutating webhook served here, or a
   * MutatingAdmissionPolicy the apiserver evaluates itself (Kubernetes 1.36+); then there is no
   * MutatingWebhookConfiguration to inject and /mutate is not served.
   */
  readonly defaults: "webhook" | "policy";
  /**
   * Who keeps the certificate Secret: the operator (creates and rotates it), or another issuer such as
   * cert-manager, whose Secret the operator only reads (external-certificates.ts).
   */
  readonly certIssuer: "operator" | "external";
}

/** A policy that allows everything the CRD allows: no flag set. */
export const openPolicy: PlatformPolicy = {
  allowedRegistries: [],
  maxReplicas: undefined,
  maxStorage: undefined,
  namespaceBudget: {},
  requireExpandableStorage: false,
  chartSources: [],
};

/** The flags, as messages name them. */
export const policyFlags = {
  allowedRegistries: "--allowed-registries",
  maxReplicas: "--max-replicas",
  maxStorage: "--max-storage",
  instances: "--namespace-max-instances",
  replicas: "--namespace-max-replicas",
  storage: "--namespace-max-storage",
  requireExpandableStorage: "--require-expandable-storage",
} as const;

/** The three budgets a namespace has, and the namespace labels that replace the flags' (api/namespace-budget.ts). */
export { namespaceBudgetLabels, type BudgetDimension } from "../../api/index.ts";

/** Image names as Docker reads them, and which allow-list entry covers one (shared with the chart engine). */
export { normalizedImageName, parseStorageLimit, registryAllowing } from "../../api/index.ts";

/** The label whose value decides what an unset `spec.podSecurityLevel` becomes (operator/admission/mutate.ts). */
export const podSecurityEnforceLabel = "pod-security.kubernetes.io/enforce";

/**
 * `--allowed-registries`: comma-separated prefixes `host[:port][/path]` (api/image-registry.ts
 * `parseRegistryEntry`), normalised. Unset or empty: any registry. `flag`: what messages call the value.
 */
export function parseAllowedRegistries(
  value: string | undefined,
  flag: string = policyFlags.allowedRegistries,
): readonly string[] {
  const texts = (value ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const entries = texts.map(parseRegistryEntry);
  const problems = entries.flatMap((entry) => ("problem" in entry ? [entry.problem] : []));
  if (problems.length > 0) throw new Error(`${flag}: ${problems.join("; ")}`);
  const prefixes = entries.flatMap((entry) => ("prefix" in entry ? [entry.prefix] : []));
  // Compared as normalised (ghcr.io/acme and GHCR.io/acme/ are one entry), as the namespaces' list refuses a repeat.
  const twice = prefixes.findIndex((prefix, i) => prefixes.indexOf(prefix) !== i);
  if (twice !== -1) {
    const text = texts[twice] ?? "";
    const prefix = prefixes[twice] ?? "";
    throw new Error(`${flag}: "${text}" is listed twice${text === prefix ? "" : ` (as ${prefix})`}; list it once`);
  }
  return prefixes;
}

/** `--max-storage` and `--namespace-max-storage`: a positive quantity, kept as written. */
export function storageLimitFlag(flag: string, value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  if (!parseStorageLimit(value, 1)) {
    throw new Error(`${flag} must be a storage quantity of at least 1 byte such as 100Gi or 500G, got "${value}"`);
  }
  return value.trim();
}

/** A count limit from a namespace label: a whole number, 0 included (0 closes the namespace). */
export function parseCountLimit(text: string): number | undefined {
  if (!/^\s*\d+\s*$/.test(text)) return undefined;
  const count = Number(text);
  return Number.isSafeInteger(count) ? count : undefined;
}

/**
 * `--webhook-cert-secret=NS/NAME`: the Secret holding the webhook's CA and serving certificate. Read as an object
 * key (kube/object-key.ts), then held to what a namespace and a Secret's name may be, with the flag's own message.
 */
export function parseSecretReference(flag: string, value: string): ObjectKey {
  const key = readObjectKey(value);
  if (!key || !isDns1123Label(key.namespace) || !isDns1123Subdomain(key.name)) {
    throw new Error(`${flag} must be NAMESPACE/NAME of a Secret (lower-case DNS names), got "${value}"`);
  }
  return key;
}

/** The key written `text`, or undefined when it is not `namespace/name`. */
function readObjectKey(text: string): ObjectKey | undefined {
  try {
    return parseObjectKey(text);
  } catch {
    return undefined;
  }
}

/** `--webhook-hosts=a,b`: the serving certificate's names, each a DNS name or an IP address. */
export function parseWebhookHosts(flag: string, value: string): readonly string[] {
  const hosts = value
    .split(",")
    .map((host) => host.trim())
    .filter(Boolean);
  const bad = hosts.filter((host) => isIP(host) === 0 && !isDns1123Subdomain(host.toLowerCase()));
  if (hosts.length === 0 || bad.length > 0) {
    throw new Error(
      `${flag} must be DNS names or IP addresses separated by commas, such as ` +
        `myapp-operator-webhook.myapp-system.svc,127.0.0.1, got "${value}"`,
    );
  }
  return hosts;
}

const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The longest `--webhook-cert-validity`: 10 years. The CA lives 10 times as long (certificate-store.ts), and an
 * X.509 date ends at 9999-12-31; 100 years from now stays well inside it, where 100000000h would fail every
 * certificate the operator makes, at start.
 */
export const maxCertValidityHours = 87_600;

/**
 * A Go-style duration (`2160h`, `90m`, `1h30m`, `60s`) in milliseconds; at least one second, and at most `maxHours`
 * hours when given (the message says why: `maxReason`).
 */
export function parseDuration(flag: string, value: string, maxHours?: number, maxReason?: string): number {
  const text = value.trim();
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const total = parts.reduce(
    (sum, [, amount = "0", unit = "s"]) => sum + Number(amount) * (durationUnits[unit] ?? 0),
    0,
  );
  const max = maxHours === undefined ? Number.POSITIVE_INFINITY : maxHours * 3_600_000;
  if (
    parts.map((part) => part[0]).join("") !== text ||
    text === "" ||
    !(total >= 1000) ||
    !Number.isFinite(total) ||
    total > max
  ) {
    const most = maxHours === undefined ? "" : `, and at most ${maxHours}h${maxReason ? ` (${maxReason})` : ""}`;
    throw new Error(`${flag} must be a duration of at least 1s such as 2160h, 90m or 60s${most}, got "${value}"`);
  }
  return Math.round(total);
}

/** `--webhook-cert-validity`: a duration from 1s to {@link maxCertValidityHours}. */
export function parseCertValidity(flag: string, value: string): number {
  return parseDuration(flag, value, maxCertValidityHours, "10 years: the CA lives 10 times as long");
}
