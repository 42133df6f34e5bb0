/**
 * Which cluster the local `dev` stack's state describes: `npm start` records it after each `pulumi up`, and both
 * `npm start` and `npm run down` compare it with the cluster the kubeconfig reaches now. The state of a local
 * cluster that was recreated (another kube-system uid at the same address, or under the same local cluster name
 * on other ports, as `npm run cluster -- down` and `up` do when its ports were taken) describes objects that went
 * with the old cluster: no refresh or destroy can reach them (the provider refuses to touch an instance through a
 * connection to another cluster, and the old one's certificate authority is gone), so the state is forgotten.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

/**
 * Where the stack was applied: the cluster, the name of the checkout's local cluster it was, and whether that `up`
 * ran to its end (an interrupted one left objects its state may not know of: the next refreshes first).
 */
export interface AppliedTo extends ClusterIdentity {
  readonly localCluster?: string;
  readonly complete?: boolean;
}

/** Compares the recorded cluster with `current`, this checkout's local cluster `localCluster`. Pure but for reading. */
export function stateOrigin(file: string, current: ClusterIdentity, localCluster: string): StateOrigin {
  const raw: unknown = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
  const identity = recordedIdentity(raw);
  const name = (raw as { localCluster?: unknown } | undefined)?.localCluster;
  const last = identity && (typeof name === "string" ? { ...identity, localCluster: name } : identity);
  return originOf(last, current, localCluster);
}

/** The decision of {@link stateOrigin}; a record of another shape is no record. */
export function originOf(last: AppliedTo | undefined, current: ClusterIdentity, localCluster: string): StateOrigin {
  if (sameCluster(last, current)) return "this-cluster";
  if (!last?.uid || !current.uid) return "unknown";
  return last.server === current.server || last.localCluster === localCluster ? "recreated-cluster" : "unknown";
}

/**
 * Records that the stack is being (`complete` false: before `up`) or was applied to `cluster`, this checkout's
 * local cluster `localCluster`.
 */
export function recordAppliedTo(file: string, cluster: ClusterIdentity, localCluster: string, complete: boolean): void {
  writeFileSync(file, JSON.stringify({ ...cluster, localCluster, complete } satisfies AppliedTo) + "\n");
}

/** False when the last `up` recorded did not run to its end (records of before that was recorded count as done). */
export function lastUpComplete(file: string): boolean {
  if (!existsSync(file)) return true;
  return (JSON.parse(readFileSync(file, "utf8")) as { complete?: unknown }).complete !== false;
}

/** Forgets where the stack was applied (it was destroyed or forgotten). */
export function forgetAppliedTo(file: string): void {
  rmSync(file, { force: true });
}

/** The local backend's state file of `stack` (project myapp-platform, Pulumi.yaml). */
export function stackStateFile(backendUrl: string, stack: string): string {
  return path.join(new URL(backendUrl).pathname, ".pulumi/stacks/myapp-platform", `${stack}.json`);
}

/**
 * How many operations the stack's state says were in flight when its last deployment ended (a pulumi killed, or
 * stopped by a second Ctrl-C, mid-create); 0 without a readable state. Pure but for reading.
 */
export function pendingOperations(file: string): number {
  try {
    const state = JSON.parse(readFileSync(file, "utf8")) as {
      checkpoint?: { latest?: { pending_operations?: unknown } };
    };
    const pending = state.checkpoint?.latest?.pending_operations;
    return Array.isArray(pending) ? pending.length : 0;
  } catch {
    return 0;
  }
}

/** What `npm start` runs for the stack: a refresh that clears pending creates first, and `up` with `--refresh`. */
export interface UpPlan {
  /** `pulumi refresh --clear-pending-creates` before `up`, and why. */
  readonly clearPendingCreates?: string;
  /** `up --refresh`, and why. */
  readonly refresh?: string;
}

/**
 * The plan for `origin` (after a recreated cluster's state was forgotten: nothing to refresh), whether the last
 * `up` ran to its end (`lastComplete`), and the state's pending operations. A cut-short up, or pending operations
 * however they came, get a refresh of their own with `--clear-pending-creates`: `up --refresh` cannot clear
 * pending creates (non-interactively a refresh only drops the other kinds), so every later `up` warned of them
 * again; a create dropped from the state is applied again by the `up` that follows. Pure.
 */
export function upPlan(origin: StateOrigin, lastComplete: boolean, pending: number): UpPlan {
  if (origin === "recreated-cluster") return {};
  if (origin === "this-cluster" && !lastComplete) return { clearPendingCreates: "the last up was cut short" };
  if (pending > 0) {
    return {
      clearPendingCreates: `${pending} pending operation${pending === 1 ? "" : "s"} of an interrupted deployment`,
    };
  }
  return origin === "unknown" ? { refresh: "state of another or no cluster" } : {};
}
