/**
 * Which cluster an instance lives in, and the check that an operation reaches that cluster and no other. A
 * kubeconfig can name any cluster; without this check a refresh through the wrong one reads 404 and drops the
 * instance from the stack, and a destroy "succeeds" while the app keeps running where it was.
 */
import { ForbiddenError, type KubeClient } from "../kube/index.ts";
import { serverOf } from "./connection.ts";
import type { ClusterIdentity, InstanceInputs } from "./inputs.ts";

const identities = new WeakMap<KubeClient, Promise<ClusterIdentity>>();

/**
 * The identity of the cluster `client` reaches: its server URL and the uid of its `kube-system` namespace (one
 * GET per client and process). Without permission to read that namespace, the uid is "" and only the URL counts.
 */
export function clusterIdentity(client: KubeClient): Promise<ClusterIdentity> {
  let identity = identities.get(client);
  if (!identity) {
    const server = serverOf(client);
    identity = client.get("v1", "Namespace", "kube-system").then(
      (namespace) => ({ server, uid: namespace.metadata.uid ?? "" }),
      (error: unknown) => {
        if (error instanceof ForbiddenError) return { server, uid: "" };
        identities.delete(client);
        throw error;
      },
    );
    identities.set(client, identity);
  }
  return identity;
}

/** A recorded identity, if `value` (from state) is one. State written before 0.2.0 has none. */
export function recordedIdentity(value: unknown): ClusterIdentity | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { server, uid } = value as Record<string, unknown>;
  return typeof server === "string" && typeof uid === "string" ? { server, uid } : undefined;
}

/** True when both identities are the same cluster: by uid when both have one, else by server URL. */
export function sameCluster(a: ClusterIdentity, b: ClusterIdentity): boolean {
  return a.uid && b.uid ? a.uid === b.uid : a.server === b.server;
}

/** The error for an operation whose connection reaches another cluster than the instance's. */
export class WrongClusterError extends Error {
  constructor(
    operation: string,
    inputs: Pick<InstanceInputs, "logicalName" | "namespace" | "name">,
    recorded: ClusterIdentity,
    actual: ClusterIdentity,
  ) {
    super(
      `Cannot ${operation} ${inputs.logicalName} (MyAppInstance ${inputs.namespace}/${inputs.name}): it lives in ` +
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
