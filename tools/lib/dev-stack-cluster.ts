/**
 * Which cluster the local `dev` stack's state describes: `npm start` records it after each `pulumi up`, and both
 * `npm start` and `npm run down` compare it with the cluster the kubeconfig reaches now. The state of a local
 * cluster that was recreated in place (same address, another kube-system uid) describes objects that went with
 * the old cluster: no refresh or destroy can reach them (the provider refuses to touch an instance through a
 * connection to another cluster), so the state is forgotten instead.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { recordedIdentity, sameCluster, type ClusterIdentity } from "../../kube/cluster-identity.ts";

/** What the stack's state is to the cluster reached now. */
export type StateOrigin =
  /** Last applied to this cluster. */
  | "this-cluster"
  /** Last applied to a cluster at this same address that was since recreated: its objects are gone. */
  | "recreated-cluster"
  /** Another cluster, or no record: refresh before trusting it. */
  | "unknown";

/** The file next to the local backend's state that records where `stack` was last applied. */
export function appliedToFile(backendUrl: string, stack: string): string {
  return path.join(new URL(backendUrl).pathname, `${stack}.cluster.json`);
}

/** Compares the recorded cluster with `current`. Pure but for reading the record. */
export function stateOrigin(file: string, current: ClusterIdentity): StateOrigin {
  const last = existsSync(file) ? recordedIdentity(JSON.parse(readFileSync(file, "utf8"))) : undefined;
  return originOf(last, current);
}

/** The decision of {@link stateOrigin}; a record of another shape is no record. */
export function originOf(last: ClusterIdentity | undefined, current: ClusterIdentity): StateOrigin {
  if (sameCluster(last, current)) return "this-cluster";
  return last && last.server === current.server && last.uid && current.uid ? "recreated-cluster" : "unknown";
}

export function recordAppliedTo(file: string, cluster: ClusterIdentity): void {
  writeFileSync(file, JSON.stringify(cluster) + "\n");
}
