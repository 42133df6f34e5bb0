/** Loads Kubernetes credentials the way kubectl does, or from explicit input. */
import { KubeConfig } from "@kubernetes/client-node";

export interface KubeConfigSource {
  /** Kubeconfig file contents (YAML); takes precedence over everything else. */
  readonly kubeconfig?: string;
  /** Path to a kubeconfig file. */
  readonly path?: string;
  /** Context to use instead of the current one. */
  readonly context?: string;
}

/**
 * Explicit contents, then an explicit path, then in-cluster config when running in a pod, then KUBECONFIG or
 * ~/.kube/config (client-node's loadFromDefault follows kubectl's rules).
 */
export function loadKubeConfig(source: KubeConfigSource = {}): KubeConfig {
  const kc = new KubeConfig();
  if (source.kubeconfig) kc.loadFromString(source.kubeconfig);
  else if (source.path) kc.loadFromFile(source.path);
  else if (process.env.KUBERNETES_SERVICE_HOST && !process.env.KUBECONFIG) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (source.context) {
    if (!kc.getContextObject(source.context)) {
      const known =
        kc
          .getContexts()
          .map((c) => c.name)
          .join(", ") || "none";
      throw new Error(`kubeconfig has no context "${source.context}" (contexts: ${known})`);
    }
    kc.setCurrentContext(source.context);
  }
  if (!kc.getCurrentCluster()) throw new Error("kubeconfig names no current cluster: set a context or KUBECONFIG");
  return kc;
}
