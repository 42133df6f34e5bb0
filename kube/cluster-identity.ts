/**
 * Which cluster a client reaches: the API server's URL and the uid of its `kube-system` namespace, which is new with
 * every cluster (even one recreated on the same port) and stays the same whatever URL or credentials reach it.
 * Whatever describes objects in one cluster records it and checks it before use: the provider's state (a refresh
 * through the wrong kubeconfig would read 404 and drop the instance), the tools' local files (nothing of a deleted
 * or recreated cluster is trusted).
 */
import type { KubeClient } from "./client.ts";
import { ForbiddenError } from "./errors.ts";

/**
 * Which cluster an instance lives in: the API server's URL (as the kubeconfig names it) and the uid of its
 * `kube-system` namespace ("" when the credentials may not read it).
 */
export interface ClusterIdentity {
  readonly server: string;
  readonly uid: string;
}

const identities = new WeakMap<KubeClient, Promise<ClusterIdentity>>();

/** The API server URL `client` talks to, as its kubeconfig names it. */
export function serverOf(client: KubeClient): string {
  return client.config.getCurrentCluster()?.server ?? "(unknown server)";
}

/**
 * The identity of the cluster `client` reaches (one GET per client and process). Without permission to read the
 * `kube-system` namespace, the uid is "" and only the URL counts.
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

/** A recorded identity, if `value` (read from state or a file) is one; anything else (older records) is none. */
export function recordedIdentity(value: unknown): ClusterIdentity | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { server, uid } = value as Record<string, unknown>;
  return typeof server === "string" && typeof uid === "string" ? { server, uid } : undefined;
}

/**
 * True when both identities are the same cluster: by uid when both have one, else by server URL. No identity (none
 * recorded) is never the same cluster.
 */
export function sameCluster(a: ClusterIdentity | undefined, b: ClusterIdentity | undefined): boolean {
  if (!a || !b) return false;
  return a.uid && b.uid ? a.uid === b.uid : a.server === b.server;
}
