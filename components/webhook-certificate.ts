/**
 * The webhook's serving certificate as a cert-manager `Certificate`, when the platform has cert-manager issue it
 * (`webhooks.certManager`): its Secret is the one the operator would otherwise keep itself (`NAME-webhook-cert`),
 * for the same names (webhooks.ts `webhookHosts`) and lifetime (90 days, renewed with 30 left). The operator only
 * reads it (operator/admission/external-certificates.ts) and injects its `ca.crt` itself, so cert-manager's
 * cainjector is not needed. A new private key on every renewal: nothing pins it.
 */
import { isIP } from "node:net";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";
import { webhookHosts } from "./webhooks.ts";

/** A cert-manager.io/v1 Certificate, as far as this component writes one. */
export interface CertManagerCertificateManifest {
  readonly apiVersion: "cert-manager.io/v1";
  readonly kind: "Certificate";
  readonly metadata: ReturnType<typeof objectMeta>;
  readonly spec: {
    readonly secretName: string;
    readonly dnsNames?: string[];
    readonly ipAddresses?: string[];
    readonly duration: string;
    readonly renewBefore: string;
    readonly privateKey: { readonly algorithm: "ECDSA"; readonly size: 256; readonly rotationPolicy: "Always" };
    readonly usages: string[];
    readonly issuerRef: { readonly name: string; readonly kind: string; readonly group: "cert-manager.io" };
  };
}

/** The Certificate, or undefined unless cert-manager issues the webhook's certificate. */
export function webhookCertificate(settings: OperatorSettings): CertManagerCertificateManifest | undefined {
  const certManager = settings.webhooks.certManager;
  if (!settings.webhooks.enabled || !certManager) return undefined;
  const secretName = operatorObjectNames(settings).webhookCertificate;
  const hosts = webhookHosts(settings);
  const dnsNames = hosts.filter((host) => isIP(host) === 0);
  const ipAddresses = hosts.filter((host) => isIP(host) !== 0);
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: objectMeta(settings, secretName, settings.namespace),
    spec: {
      secretName,
      ...(dnsNames.length > 0 ? { dnsNames } : {}),
      ...(ipAddresses.length > 0 ? { ipAddresses } : {}),
      duration: "2160h",
      renewBefore: "720h",
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      usages: ["server auth", "digital signature", "key encipherment"],
      issuerRef: { name: certManager.issuer, kind: certManager.kind, group: "cert-manager.io" },
    },
  };
}
