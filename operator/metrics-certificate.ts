/**
 * The certificate of a secure /metrics when the platform mounts none (`--metrics-secure` without
 * `--metrics-cert-dir`): self-signed, made in memory at start, as controller-runtime does for secure metrics
 * without a certificate directory. Bearer tokens then never cross the pod network in clear text; a scraper that
 * should verify the server gets a certificate of its own through `--metrics-cert-dir` (cert-manager, say).
 * Nothing is stored: a restart makes a new one. Valid for a year, longer than an operator process lives between
 * upgrades; a scraper that does not verify (Prometheus' `insecure_skip_verify`, as kubebuilder's ServiceMonitor
 * has it) would not look at the dates anyway.
 */
import { hostname } from "node:os";
import {
  createCertificateAuthority,
  createServingCertificate,
  type CertificatePair,
} from "./admission/certificates.ts";

/** How long the self-signed certificate is valid. */
export const selfSignedMetricsValidityMs = 365 * 24 * 3_600_000;

/**
 * A serving certificate for this host (the pod's name, as the kubelet sets it) and localhost, signed by a CA made
 * for it alone and then forgotten: its chain is the certificate and that CA.
 */
export async function selfSignedMetricsTls(nowMs: number): Promise<CertificatePair> {
  const validityMs = selfSignedMetricsValidityMs;
  const ca = await createCertificateAuthority({ validityMs, nowMs, commonName: "myapp-operator-metrics-ca" });
  const serving = await createServingCertificate({
    ca,
    hosts: [hostname(), "localhost", "127.0.0.1"],
    validityMs,
    nowMs,
  });
  return { cert: `${serving.cert}${ca.cert}`, key: serving.key };
}
