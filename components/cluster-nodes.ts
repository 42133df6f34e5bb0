/**
 * The read of the cluster's nodes, for node-runtime.ts's check of an in-cluster operator (through cluster-read.ts);
 * the component loads this file only for an in-cluster placement, so an external one costs nothing. Read-only (`list nodes`), bounded by a
 * short timeout: a check that cannot answer (no permission to list nodes, no cluster yet) says nothing, and the
 * install goes on as before.
 */
import type { ClusterConnection } from "./cluster-connection.ts";
import { readCluster } from "./cluster-read.ts";
import type { NodeSummary } from "./node-runtime.ts";

/** Slower than this and the check gives up: a preview must not stall on a slow or absent cluster. */
export const nodeReadTimeoutMs = 5_000;

/** The cluster's nodes, or undefined when they cannot be read (and why, for a debug line). */
export async function readClusterNodes(
  connection: ClusterConnection,
): Promise<{ nodes: readonly NodeSummary[] } | { unavailable: string }> {
  const read = await readCluster(connection, nodeReadTimeoutMs, async (client) => {
    const list = await client.list("v1", "Node");
    return list.items as NodeSummary[];
  });
  return "unavailable" in read ? read : { nodes: read.value };
}
