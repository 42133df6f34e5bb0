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
    super(
      `Cannot ${operation} ${inputs.logicalName} (MyAppInstance ${formatObjectKey(inputs)}): it lives in ` +
        `cluster ${describe(recorded)}, but its connection now reaches cluster ${describe(actual)}. Nothing was ` +
        `changed in either cluster or in the stack. Point the kubeconfig/context (or the platform's Kubernetes ` +
        `provider) back at ${recorded.server}. To move the instance, destroy it with the old connection first, ` +
        `then create it with the new one.`,
    );
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
