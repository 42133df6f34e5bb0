/**
 * Which cluster a local file was made for: the apiserver URL and the kube-system namespace's UID (new with every
 * cluster, even one recreated on the same port). Files that describe a cluster are written with it and checked
 * against the running cluster before use, so nothing of a deleted or recreated cluster is trusted.
 */
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";

export interface ClusterIdentity {
  readonly server: string;
  readonly kubeSystemUid: string;
}

export async function clusterIdentity(kubeconfig: string): Promise<ClusterIdentity> {
  const config = loadKubeConfig({ path: kubeconfig });
  const server = config.getCurrentCluster()?.server;
  if (!server) throw new Error(`${kubeconfig} has no current cluster`);
  const namespace = await new KubeClient(config).get<KubeObject>("v1", "Namespace", "kube-system");
  return { server, kubeSystemUid: namespace.metadata.uid! };
}

export function sameCluster(a: ClusterIdentity | undefined, b: ClusterIdentity | undefined): boolean {
  return !!a && !!b && a.server === b.server && a.kubeSystemUid === b.kubeSystemUid;
}
