/**
 * The check that an operation reaches the cluster an instance lives in (its identity: kube/cluster-identity.ts)
 * and no other. A kubeconfig can name any cluster; without this check a refresh through the wrong one reads 404
 * and drops the instance from the stack, and a destroy "succeeds" while the app keeps running where it was.
 */
import { clusterIdentity, sameCluster, type ClusterIdentity } from "../kube/cluster-identity.ts";
import type { KubeClient } from "../kube/index.ts";
import { formatObjectKey } from "../kube/object-key.ts";
import type { InstanceInputs } from "./inputs.ts";

/** The error for an operation whose connection reaches another cluster than the instance's. */
export class WrongClusterError extends Error {
  constructor(
    operation: string,
    inputs: Pick<InstanceInputs, "logicalName" | "namespace" | "name">,
    recorded: ClusterIdentity,
    actual: ClusterIdentity,
  ) {
    const where = `${inputs.logicalName} (MyAppInstance ${formatObjectKey(inputs)})`;
    const facts =
      `Cannot ${operation} ${where}: it lives in cluster ${describe(recorded)}, but its connection now reaches ` +
      `cluster ${describe(actual)}. Nothing was changed in either cluster or in the stack.`;
    // The same address with another kube-system uid: the cluster there was deleted and made again (a local
    // cluster's `down` and `up`), or another one took its address. Pointing back at the address cannot help.
    const next =
      recorded.server === actual.server
        ? ` The cluster at ${recorded.server} is not the one the instance was created in: it was deleted and made ` +
          `again, or another cluster took its address. If the old cluster is gone, the instance and its volumes ` +
          `went with it: remove it from the stack with \`pulumi state delete '<urn>'\` (\`pulumi stack ` +
          `--show-urns\` lists them), then \`pulumi up\` creates it in this cluster. If the old cluster still runs ` +
          `elsewhere, point the kubeconfig/context there.`
        : ` Point the kubeconfig/context (or the platform's Kubernetes provider) back at ${recorded.server}. To move ` +
          `the instance, destroy it with the old connection first, then create it with the new one.`;
    super(facts + next);
    this.name = "WrongClusterError";
  }
}

/** Throws {@link WrongClusterError} unless `client` reaches the recorded cluster (nothing recorded: nothing to check). */
export async function verifyCluster(
  client: KubeClient,
  recorded: ClusterIdentity | undefined,
  operation: string,
  inputs: Pick<InstanceInputs, "logicalName" | "namespace" | "name">,
): Promise<ClusterIdentity> {
  const actual = await clusterIdentity(client);
  if (recorded && !sameCluster(recorded, actual)) throw new WrongClusterError(operation, inputs, recorded, actual);
  return actual;
}

function describe(identity: ClusterIdentity): string {
  return `${identity.server} (kube-system uid ${identity.uid || "unknown"})`;
}
