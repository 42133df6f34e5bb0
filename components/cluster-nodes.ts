/**
 * The one read the component makes of the cluster: its nodes, for node-runtime.ts's check of an in-cluster
 * operator. Through kube/ (the project's one client layer) rather than a second client; the component loads this
 * file only for an in-cluster placement, so an external one costs nothing. Read-only (`list nodes`), bounded by a
 * short timeout: a check that cannot answer (no permission to list nodes, no cluster yet) says nothing, and the
 * install goes on as before.
 */
import { KubeClient, loadKubeConfig } from "../kube/index.ts";
import type { ClusterConnection } from "./cluster-connection.ts";
import type { NodeSummary } from "./node-runtime.ts";

/** Slower than this and the check gives up: a preview must not stall on a slow or absent cluster. */
export const nodeReadTimeoutMs = 5_000;

/** The cluster's nodes, or undefined when they cannot be read (and why, for a debug line). */
export async function readClusterNodes(
  connection: ClusterConnection,
): Promise<{ nodes: readonly NodeSummary[] } | { unavailable: string }> {
  if (connection.kubeconfig === undefined) return { unavailable: `no kubeconfig (${connection.source})` };
  let client: KubeClient;
  try {
    client = new KubeClient(
      loadKubeConfig({
        kubeconfig: connection.kubeconfig,
        ...(connection.context ? { context: connection.context } : {}),
      }),
      { requestTimeoutMs: nodeReadTimeoutMs },
    );
  } catch {
    // Never quote a kubeconfig error: its text is a secret; the Kubernetes provider reports a bad one itself.
    return { unavailable: `the kubeconfig of ${connection.source} could not be loaded` };
  }
  try {
    const list = await client.list("v1", "Node");
    return { nodes: list.items as NodeSummary[] };
  } catch (error) {
    return { unavailable: error instanceof Error ? error.message : String(error) };
  } finally {
    await client.close();
  }
}
