/**
 * The CAs a platform's private chart sources are signed by (`chartSourcesCa`): trusted by the operator beside
 * Node's own, as `NODE_EXTRA_CA_CERTS` does, which Node reads once at start. In the cluster the certificates are a
 * ConfigMap in the operator's namespace, mounted into its pods; the pod template carries their digest, so a changed
 * bundle rolls the pods (a running process never reads it again). An external operator's process needs the variable
 * set to a file of them (`NODE_EXTRA_CA_CERTS=./ca.pem npx --no-install myapp-operator`).
 */
import { createHash, X509Certificate } from "node:crypto";
import type { ConfigMapManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";

/** Where the pod finds the bundle, and the key of the ConfigMap that holds it. */
export const chartSourcesCaDir = "/etc/myapp/chart-sources-ca";
export const chartSourcesCaKey = "ca.crt";
/** The pod template's annotation whose change rolls the pods when the bundle changes. */
export const chartSourcesCaDigestAnnotation = "myapp.example.com/chart-sources-ca-digest";

const pemBlock = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/** What is wrong with `pem` as a bundle of CA certificates, or undefined when nothing is. */
export function chartSourcesCaProblem(pem: string): string | undefined {
  const blocks = pem.match(pemBlock) ?? [];
  if (blocks.length === 0) {
    return "holds no PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)";
  }
  for (const [i, block] of blocks.entries()) {
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(block);
    } catch (error) {
      return `certificate ${i + 1} of ${blocks.length} cannot be read: ${(error as Error).message}`;
    }
    if (!certificate.ca) {
      return `certificate ${i + 1} of ${blocks.length} (${certificate.subject.replace(/\n/g, ", ")}) is not a CA certificate`;
    }
  }
  return undefined;
}

/** The ConfigMap holding the bundle, when the platform gives one and the operator runs in the cluster. */
export function chartSourcesCaConfigMap(settings: OperatorSettings): ConfigMapManifest | undefined {
  if (settings.chartSourcesCa === undefined || settings.operatorPlacement !== "in-cluster") return undefined;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: objectMeta(settings, operatorObjectNames(settings).chartSourcesCa, settings.namespace),
    data: { [chartSourcesCaKey]: settings.chartSourcesCa },
  };
}

/** What the operator's pod adds for the bundle: the volume, its mount, the variable and the digest annotation. */
export function chartSourcesCaPod(settings: OperatorSettings) {
  if (settings.chartSourcesCa === undefined) return undefined;
  return {
    volume: { name: "chart-sources-ca", configMap: { name: operatorObjectNames(settings).chartSourcesCa } },
    volumeMount: { name: "chart-sources-ca", mountPath: chartSourcesCaDir, readOnly: true },
    env: { name: "NODE_EXTRA_CA_CERTS", value: `${chartSourcesCaDir}/${chartSourcesCaKey}` },
    annotations: {
      [chartSourcesCaDigestAnnotation]: createHash("sha256").update(settings.chartSourcesCa).digest("hex").slice(0, 16),
    },
  };
}
