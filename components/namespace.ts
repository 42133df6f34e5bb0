/** The operator's namespace, which enforces the Pod Security "restricted" level for everything in it. */
import type { NamespaceManifest } from "./manifest-types.ts";
import { objectMeta } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";

/** Pod Security admission labels: reject (enforce), report (audit) and warn on anything below "restricted". */
export const restrictedPodSecurityLabels: Readonly<Record<string, string>> = {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
  "pod-security.kubernetes.io/audit": "restricted",
  "pod-security.kubernetes.io/warn": "restricted",
};

/** The namespace to create, or undefined when the settings say to use an existing one. */
export function operatorNamespace(settings: OperatorSettings): NamespaceManifest | undefined {
  if (!settings.createNamespace) return undefined;
  const meta = objectMeta(settings, settings.namespace);
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { ...meta, labels: { ...meta.labels, ...restrictedPodSecurityLabels } },
  };
}
