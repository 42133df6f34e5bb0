/**
 * The webhook's certificate when someone else issues it (`--webhook-cert-issuer=external`: cert-manager, or any
 * PKI that keeps a `kubernetes.io/tls` Secret with `tls.crt`, `tls.key` and the issuing CA in `ca.crt`). Each
 * replica reads the Secret (never writes it), serves its certificate, reloads it when it changes, and injects the
 * CA into the webhook configurations itself, so no cainjector is needed.
 *
 * Trust still comes before use: the bundle injected is `ca.crt` together with every CA seen before that has not
 * expired, so a certificate being served stays verifiable while the issuer's CA changes, and a new certificate from
 * a CA the apiserver does not trust yet is served only once that bundle has been in every configuration for
 * `propagationMs` (certificate-store.ts does the same for its own CA). A certificate renewed by a CA already
 * trusted is served at the next check.
 */
import type { Logger } from "pino";
import { realClock, type Clock } from "../../kube/clock.ts";
import { BundleTrust, PolledCertificates } from "./certificate-polling.ts";
import type { InjectionResult } from "./ca-injection.ts";
import { safe, type CertificateSecretClient, type WebhookCertificates } from "./certificate-store.ts";
import {
  fingerprintOf,
  isExpired,
  isIssuedBy,
  keyMatches,
  splitPemBundle,
  type CertificatePair,
} from "./certificates.ts";

export interface ExternalCertificatesOptions {
  /** Only `get` is used. */
  readonly secret: Pick<CertificateSecretClient, "get">;
  /** Where the Secret is, for messages. */
  readonly secretName: string;
  readonly injector: { inject(bundlePem: string): Promise<InjectionResult> };
  /** Time between reads of the Secret. @default 10_000 */
  readonly checkIntervalMs?: number;
  /** See CertificateStoreOptions.propagationMs. @default 10_000 */
  readonly propagationMs?: number;
  readonly onServing: (pair: CertificatePair) => void;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/** Why the Secret's content cannot be served, or undefined when it can (pure). */
export function externalProblem(certificates: WebhookCertificates | undefined, nowMs: number): string | undefined {
  if (!certificates) return "it does not exist (yet): its issuer creates it";
  const { servingCert, servingKey, caBundle } = certificates;
  if (!safe(() => keyMatches(servingCert, servingKey), false)) {
    return "tls.crt and tls.key do not hold a certificate and its key";
  }
  if (safe(() => isExpired(servingCert, nowMs), true)) return "the certificate in tls.crt has expired";
  const cas = safe(() => splitPemBundle(caBundle), []);
  if (cas.length === 0) {
    return "ca.crt holds no CA: the apiserver could not verify the certificate (use an issuer that fills it, e.g. a cert-manager CA issuer)";
  }
  if (!cas.some((ca) => safe(() => isIssuedBy(servingCert, ca), false))) {
    return "the certificate in tls.crt was not issued by a CA in ca.crt";
  }
  return undefined;
}

/** Serves and trusts the certificate of a Secret another issuer keeps; see the file's comment. */
export class ExternalCertificates extends PolledCertificates {
  private readonly options: ExternalCertificatesOptions;
  private readonly trust: BundleTrust;
  /** Every CA seen in ca.crt, oldest first; expired ones leave at the next check. */
  private known: string[] = [];

  constructor(options: ExternalCertificatesOptions) {
    const clock = options.clock ?? realClock;
    super(clock, options.logger, options.checkIntervalMs ?? 10_000);
    this.options = options;
    this.trust = new BundleTrust(options.injector, options.propagationMs ?? 10_000, clock);
  }

  /**
   * One check: read the Secret, inject the bundle, serve a changed certificate when its CA is trusted. Throws when
   * the Secret cannot be served (a certificate already served stays).
   */
  async check(): Promise<void> {
    const stored = await this.options.secret.get();
    const nowMs = this.clock.wallTimeMs();
    const problem = externalProblem(stored?.certificates, nowMs);
    if (problem || !stored) throw new Error(`the webhook certificate Secret ${this.options.secretName}: ${problem}`);
    const { servingCert, servingKey, caBundle } = stored.certificates;
    const known = [...this.known, ...splitPemBundle(caBundle)];
    this.known = known.filter(
      (ca, i) =>
        !safe(() => isExpired(ca, nowMs), true) &&
        known.findIndex((other) => fingerprintOf(other) === fingerprintOf(ca)) === i,
    );
    const propagated = await this.trust.inject(this.known.join(""));
    const pair = { cert: servingCert, key: servingKey };
    const served = this.current();
    if (served?.cert === pair.cert && served.key === pair.key) return;
    // Trusted already: the CA of the certificate being served (the apiserver verifies it today) and, once the
    // bundle has propagated, every CA in it. A first start has nothing to keep working: it serves at once.
    const trusted = [
      ...(served ? this.known.filter((ca) => safe(() => isIssuedBy(served.cert, ca), false)) : []),
      ...(propagated ? this.known : []),
    ];
    if (served && !trusted.some((ca) => safe(() => isIssuedBy(servingCert, ca), false))) {
      this.logger.info("a new webhook certificate from a CA not trusted yet: serving it once it is");
      return;
    }
    this.serve(pair);
    this.logger.info({ fingerprint: safe(() => fingerprintOf(servingCert), "") }, "serving a new webhook certificate");
    this.options.onServing(pair);
  }
}
