/**
 * The webhook's CA and serving certificate, kept in ONE Secret in the operator's namespace (`kubernetes.io/tls`:
 * `tls.crt`, `tls.key`, `ca.crt` = the CA bundle, `ca.key`) that every replica reads, so all replicas serve the
 * same certificate and the apiserver needs one caBundle. Any replica creates the Secret when it is missing (409: another
 * won, read theirs), rotates what is due (an update at the resourceVersion it read; 409: re-read), and polls it, so
 * every replica serves a new certificate within one check interval, without a restart.
 *
 * Rotation loses no request because trust comes before use:
 * 1. a new CA is put first into the bundle (the old one stays, since the certificate being served is from it),
 *    and the bundle is injected into the webhook configurations;
 * 2. only once every configuration holds that bundle, and the apiserver had `propagationMs` to pick it up, is a
 *    serving certificate from the new CA issued;
 * 3. the old CA leaves the bundle when it expires (its key is no longer kept, so nothing new is signed with it).
 * A serving certificate renewed from the CA that signed the current one needs no new trust, so it is issued at once.
 *
 * `ca.crt` lists the current CA first; `ca.key` is its key. A Secret that holds no usable CA (new, emptied, edited)
 * is filled anew, CA and serving certificate at once; deleting the Secret is how to force a fresh CA.
 */
import type { Logger } from "pino";
import { ConflictError, NotFoundError, type KubeClient, type KubeObject } from "../../kube/index.ts";
import { realClock, type Clock } from "../../kube/clock.ts";
import { BundleTrust, PolledCertificates } from "./certificate-polling.ts";
import type { InjectionResult } from "./ca-injection.ts";
import {
  createCertificateAuthority,
  createServingCertificate,
  fingerprintOf,
  hostsOf,
  isExpired,
  isIssuedBy,
  keyMatches,
  needsRotation,
  splitPemBundle,
  type CertificatePair,
} from "./certificates.ts";

/** The Secret's content, PEM. Missing keys read as "". */
export interface WebhookCertificates {
  /** `tls.crt`: the serving certificate. */
  readonly servingCert: string;
  /** `tls.key` */
  readonly servingKey: string;
  /** `ca.crt`: the CA bundle, current CA first, then (during a CA rotation) the previous one. */
  readonly caBundle: string;
  /** `ca.key`: the current CA's key. */
  readonly caKey: string;
}

export interface StoredCertificates {
  readonly certificates: WebhookCertificates;
  readonly resourceVersion: string;
}

/** Where the Secret lives: a narrow client, so the store is unit-tested against an in-memory Secret. */
export interface CertificateSecretClient {
  /** The Secret's content, or undefined when it does not exist. */
  get(): Promise<StoredCertificates | undefined>;
  /** Creates the Secret; throws kube's ConflictError when it already exists. */
  create(certificates: WebhookCertificates): Promise<StoredCertificates>;
  /** Writes the content if the Secret is still at `resourceVersion`; throws kube's ConflictError otherwise. */
  update(certificates: WebhookCertificates, resourceVersion: string): Promise<StoredCertificates>;
}

/** What one check decides to do. */
export type RotationStep =
  | { readonly kind: "none" }
  /** No usable CA: a new CA and a serving certificate from it, at once. */
  | { readonly kind: "issue-all"; readonly reason: string }
  /** The CA is due: a new CA goes first into the bundle; the serving certificate stays for now. */
  | { readonly kind: "rotate-ca"; readonly reason: string }
  /** A new serving certificate from the current CA. */
  | { readonly kind: "renew-serving"; readonly reason: string }
  /** The serving certificate is from the previous CA, and the current one is not yet trusted everywhere. */
  | { readonly kind: "wait-for-trust"; readonly reason: string }
  /** The bundle holds an expired or superfluous CA. */
  | { readonly kind: "prune-bundle"; readonly reason: string };

export interface RotationFacts {
  /** undefined: the Secret does not exist. */
  readonly certificates: WebhookCertificates | undefined;
  /** Wall-clock epoch milliseconds. */
  readonly nowMs: number;
  /** The SANs the serving certificate must carry. */
  readonly hosts: readonly string[];
  /** The current bundle is in every webhook configuration, and has been for long enough for the apiserver. */
  readonly bundleTrusted: boolean;
}

/** The one step due now (pure: reads certificates, generates nothing). */
export function planRotation(facts: RotationFacts): RotationStep {
  const { certificates, nowMs } = facts;
  if (!certificates) return { kind: "issue-all", reason: "the Secret does not exist" };
  const bundle = safe(() => splitPemBundle(certificates.caBundle), []);
  const ca = bundle[0];
  if (!ca) return { kind: "issue-all", reason: "ca.crt holds no certificate" };
  if (!safe(() => keyMatches(ca, certificates.caKey), false)) {
    return { kind: "issue-all", reason: "ca.key is not the key of the first certificate in ca.crt" };
  }
  if (safe(() => isExpired(ca, nowMs), true)) return { kind: "issue-all", reason: "the CA has expired" };

  const serving = servingProblem(certificates, bundle, facts);
  // A CA rotation still under way finishes before the next begins (which would drop the CA being served from).
  if (serving === "from-previous-ca") {
    return facts.bundleTrusted
      ? { kind: "renew-serving", reason: "the serving certificate is from the previous CA" }
      : { kind: "wait-for-trust", reason: "the new CA is not yet in every webhook configuration" };
  }
  // A due CA goes before a due serving certificate, which is then issued by the new CA once it is trusted.
  if (needsRotation(ca, nowMs)) return { kind: "rotate-ca", reason: "less than a third of the CA's lifetime is left" };
  if (serving) return { kind: "renew-serving", reason: serving };

  if (bundle.length > 2 || bundle.slice(1).some((cert) => safe(() => isExpired(cert, nowMs), true))) {
    return { kind: "prune-bundle", reason: "ca.crt holds an expired or superfluous CA" };
  }
  return { kind: "none" };
}

/**
 * Why the serving certificate must be renewed, "from-previous-ca" when it is sound but from a CA other than the
 * current one, or undefined when nothing is wrong.
 */
function servingProblem(
  certificates: WebhookCertificates,
  bundle: readonly string[],
  facts: RotationFacts,
): string | undefined {
  const { servingCert, servingKey } = certificates;
  if (!safe(() => keyMatches(servingCert, servingKey), false)) {
    return "tls.crt/tls.key do not hold a certificate and its key";
  }
  if (isExpired(servingCert, facts.nowMs)) return "the serving certificate has expired";
  const issuer = bundle.findIndex((ca) => safe(() => isIssuedBy(servingCert, ca), false));
  if (issuer < 0) return "the serving certificate is not from a CA in ca.crt";
  if (issuer > 0) return "from-previous-ca";
  const hosts = hostsOf(servingCert).map(canonicalHost);
  const wanted = facts.hosts.map(canonicalHost);
  if (hosts.length !== wanted.length || wanted.some((host) => !hosts.includes(host))) {
    return `the serving certificate is for ${hosts.join(", ")}, not ${wanted.join(", ")} (--webhook-hosts)`;
  }
  if (needsRotation(servingCert, facts.nowMs)) return "less than a third of the serving certificate's lifetime is left";
  return undefined;
}

/** A host compared as a SAN: lower-case, IPv6 in the full 8-group form node:crypto prints ("0:0:0:0:0:0:0:1"). */
function canonicalHost(host: string): string {
  const lower = host.toLowerCase();
  if (!lower.includes(":")) return lower;
  const [head = "", tail = ""] = lower.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = lower.includes("::")
    ? [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return groups.map((group) => group.replace(/^0+(?=.)/, "")).join(":");
}

export interface IssueOptions {
  readonly hosts: readonly string[];
  readonly certValidityMs: number;
  readonly caValidityMs: number;
  readonly nowMs: number;
}

/** The Secret's content after `step` (generates keys and certificates). */
export async function applyRotation(
  step: Exclude<RotationStep, { kind: "none" } | { kind: "wait-for-trust" }>,
  certificates: WebhookCertificates | undefined,
  options: IssueOptions,
): Promise<WebhookCertificates> {
  const serve = (ca: CertificatePair) =>
    createServingCertificate({ ca, hosts: options.hosts, validityMs: options.certValidityMs, nowMs: options.nowMs });
  const newCa = () => createCertificateAuthority({ validityMs: options.caValidityMs, nowMs: options.nowMs });
  const bundle = certificates ? splitPemBundle(certificates.caBundle) : [];
  switch (step.kind) {
    case "issue-all": {
      const ca = await newCa();
      const serving = await serve(ca);
      return { servingCert: serving.cert, servingKey: serving.key, caBundle: ca.cert, caKey: ca.key };
    }
    case "rotate-ca": {
      const ca = await newCa();
      // The previous CA stays trusted: the serving certificate in use is from it. Older ones go.
      return { ...certificates!, caBundle: `${ca.cert}${bundle[0]}`, caKey: ca.key };
    }
    case "renew-serving": {
      const serving = await serve({ cert: bundle[0]!, key: certificates!.caKey });
      return { ...certificates!, servingCert: serving.cert, servingKey: serving.key };
    }
    case "prune-bundle": {
      const previous = bundle.slice(1).find((cert) => safe(() => !isExpired(cert, options.nowMs), false));
      return { ...certificates!, caBundle: `${bundle[0]}${previous ?? ""}` };
    }
  }
}

export interface CertificateStoreOptions {
  readonly secret: CertificateSecretClient;
  /** Injects a bundle into the webhook configurations (ca-injection.ts's CaInjector). */
  readonly injector: { inject(bundlePem: string): Promise<InjectionResult> };
  readonly hosts: readonly string[];
  /** The serving certificate's validity. */
  readonly certValidityMs: number;
  /** The CA's validity. @default 10 × certValidityMs */
  readonly caValidityMs?: number;
  /** Time between checks of the Secret and the configurations. @default certValidityMs / 20, within [1 s, 60 s] */
  readonly checkIntervalMs?: number;
  /**
   * How long a bundle must have been in every configuration before a certificate from its new CA is served: the
   * apiserver reads webhook configurations through its own informer (HA apiservers each their own). @default 10_000
   */
  readonly propagationMs?: number;
  /** Called with the serving certificate whenever it changes (the first time from `load`). */
  readonly onServing: (pair: CertificatePair) => void;
  readonly logger: Logger;
  /** @default realClock */
  readonly clock?: Clock;
}

/** Steps one check may take in a row (issue-all, then nothing; rotate-ca, then wait; ...). */
const maxStepsPerCheck = 4;

/** Loads, creates and rotates the webhook certificates; see the file's comment. */
export class CertificateStore extends PolledCertificates {
  private readonly options: CertificateStoreOptions;
  private readonly caValidityMs: number;
  private readonly trust: BundleTrust;

  constructor(options: CertificateStoreOptions) {
    const clock = options.clock ?? realClock;
    super(
      clock,
      options.logger,
      options.checkIntervalMs ?? Math.min(60_000, Math.max(1_000, Math.floor(options.certValidityMs / 20))),
    );
    this.options = options;
    this.caValidityMs = options.caValidityMs ?? 10 * options.certValidityMs;
    this.trust = new BundleTrust(options.injector, options.propagationMs ?? 10_000, clock);
    if (options.hosts.length === 0) throw new Error("hosts: the webhook certificate needs at least one host");
  }

  /**
   * One check: read (create when missing), inject, take what steps are due, hand a changed serving certificate to
   * onServing. Throws on failures other than a lost race (which it retries at once).
   */
  async check(): Promise<void> {
    let stored = await this.readOrCreate();
    for (let steps = 0; steps < maxStepsPerCheck; steps++) {
      const nowMs = this.clock.wallTimeMs();
      const certificates = stored.certificates;
      let step = planRotation({ certificates, nowMs, hosts: this.options.hosts, bundleTrusted: false });
      // Injecting a bundle that is about to be replaced wholesale would only flap the configurations.
      if (step.kind !== "issue-all") {
        const bundleTrusted = await this.trust.inject(certificates.caBundle);
        step = planRotation({ certificates, nowMs, hosts: this.options.hosts, bundleTrusted });
      }
      if (step.kind === "none" || step.kind === "wait-for-trust") break;
      this.logger.info({ step: step.kind, reason: step.reason }, "rotating the webhook certificates");
      const next = await applyRotation(step, certificates, {
        hosts: this.options.hosts,
        certValidityMs: this.options.certValidityMs,
        caValidityMs: this.caValidityMs,
        nowMs,
      });
      try {
        stored = await this.options.secret.update(next, stored.resourceVersion);
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        // Another replica wrote first: judge its result instead.
        this.logger.debug("the webhook certificate Secret changed meanwhile; re-reading it");
        stored = await this.readOrCreate();
      }
    }
    this.serveStored(stored.certificates);
  }

  private async readOrCreate(): Promise<StoredCertificates> {
    const found = await this.options.secret.get();
    if (found) return found;
    const nowMs = this.clock.wallTimeMs();
    const fresh = await applyRotation({ kind: "issue-all", reason: "the Secret does not exist" }, undefined, {
      hosts: this.options.hosts,
      certValidityMs: this.options.certValidityMs,
      caValidityMs: this.caValidityMs,
      nowMs,
    });
    try {
      const created = await this.options.secret.create(fresh);
      this.logger.info("created the webhook certificate Secret with a new CA");
      return created;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      // Another replica created it first: everyone serves theirs.
      const theirs = await this.options.secret.get();
      if (!theirs)
        throw new Error("the webhook certificate Secret was created and deleted again meanwhile", { cause: error });
      return theirs;
    }
  }

  private serveStored(certificates: WebhookCertificates): void {
    const pair = { cert: certificates.servingCert, key: certificates.servingKey };
    if (!safe(() => keyMatches(pair.cert, pair.key), false) || !this.serve(pair)) return;
    this.logger.info({ fingerprint: safe(() => fingerprintOf(pair.cert), "") }, "serving a new webhook certificate");
    this.options.onServing(pair);
  }
}

/** A secret's data keys for each field. */
const dataKeys = { servingCert: "tls.crt", servingKey: "tls.key", caBundle: "ca.crt", caKey: "ca.key" } as const;

interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/**
 * A CertificateSecretClient over a real Secret. Updates are merge patches carrying the resourceVersion read (the
 * apiserver's precondition: 409 when it moved), so a Secret someone created beforehand (e.g. to grant RBAC by
 * resourceName, which cannot restrict `create`) keeps its type, labels and other keys.
 */
export function kubeCertificateSecretClient(
  client: Pick<KubeClient, "find" | "create" | "mergePatch">,
  namespace: string,
  name: string,
  fieldManager = "myapp-operator",
): CertificateSecretClient {
  const read = (secret: SecretObject): StoredCertificates => {
    const value = (key: string) => Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8");
    return {
      resourceVersion: secret.metadata.resourceVersion ?? "",
      certificates: {
        servingCert: value(dataKeys.servingCert),
        servingKey: value(dataKeys.servingKey),
        caBundle: value(dataKeys.caBundle),
        caKey: value(dataKeys.caKey),
      },
    };
  };
  const data = (certificates: WebhookCertificates) =>
    Object.fromEntries(
      Object.entries(dataKeys).map(([field, key]) => [
        key,
        Buffer.from(certificates[field as keyof WebhookCertificates], "utf8").toString("base64"),
      ]),
    );
  return {
    async get() {
      const secret = await client.find<SecretObject>("v1", "Secret", name, namespace);
      return secret ? read(secret) : undefined;
    },
    async create(certificates) {
      const secret: SecretObject = {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name,
          namespace,
          labels: { "app.kubernetes.io/name": "myapp-operator", "app.kubernetes.io/component": "webhook" },
        },
        type: "kubernetes.io/tls",
        data: data(certificates),
      };
      return read(await client.create(secret, { fieldManager }));
    },
    async update(certificates, resourceVersion) {
      try {
        const patch = { metadata: { resourceVersion }, data: data(certificates) };
        return read(await client.mergePatch<SecretObject>("v1", "Secret", name, namespace, patch));
      } catch (error) {
        // Deleted since it was read: as a lost race, re-read (and create) it.
        if (error instanceof NotFoundError)
          throw new ConflictError(409, error.message, "Conflict", [], { cause: error });
        throw error;
      }
    },
  };
}

/** `read()`, or `fallback` when it throws: a certificate that cannot be parsed is as good as none. */
export function safe<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
