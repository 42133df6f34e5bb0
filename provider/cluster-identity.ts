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
    // When the old cluster is gone (a local cluster's `down` and `up`: at the same address, or at another one when
    // its port was taken meanwhile), pointing back at it or destroying through it cannot help: what the stack
    // recorded went with it, and only dropping it from the state lets `pulumi up` go on. Every branch says so.
    const gone = (how: string) =>
      `If the old cluster is gone${how}, the instance and its volumes went with it: remove it from the stack with ` +
      `\`pulumi state delete '<urn>'\` (\`pulumi stack --show-urns\` lists them), then \`pulumi up\` creates it ` +
      `in this cluster.`;
    const next =
      recorded.server === actual.server
        ? ` The cluster at ${recorded.server} is not the one the instance was created in: it was deleted and made ` +
          `again, or another cluster took its address. ${gone("")} If the old cluster still runs elsewhere, point the ` +
          `kubeconfig/context there.`
        : ` If the old cluster still runs, point the kubeconfig/context (or the platform's Kubernetes provider) back ` +
          `at ${recorded.server}; to move the instance, destroy it with the old connection first, then create it ` +
          `with the new one. ${gone(" (deleted, or made again at another address)")}`;
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
