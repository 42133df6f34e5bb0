/**
 * One bounded read of the cluster from the component's side, through kube/ (the project's one client layer):
 * a client from the component's connection, a short timeout, closed afterwards. The reads that need it
 * (cluster-nodes.ts, namespace-claims.ts) are loaded only when they run, so a program that never needs them
 * never loads the client.
 */
import { KubeClient, loadKubeConfig } from "../kube/index.ts";
import type { ClusterConnection } from "./cluster-connection.ts";

/** What `read` returned, or why the cluster could not be read (never the kubeconfig's text: it is a secret). */
export type ClusterRead<T> = { readonly value: T } | { readonly unavailable: string };

/** Runs `read` with a client of `connection` whose requests give up after `timeoutMs`. */
export async function readCluster<T>(
  connection: ClusterConnection,
  timeoutMs: number,
  read: (client: KubeClient) => Promise<T>,
): Promise<ClusterRead<T>> {
  if (connection.kubeconfig === undefined) return { unavailable: `no kubeconfig (${connection.source})` };
  let client: KubeClient;
  try {
    client = new KubeClient(
      loadKubeConfig({
        kubeconfig: connection.kubeconfig,
        ...(connection.context ? { context: connection.context } : {}),
      }),
      { requestTimeoutMs: timeoutMs },
    );
  } catch {
    // Never quote a kubeconfig error: its text is a secret; the Kubernetes provider reports a bad one itself.
    return { unavailable: `the kubeconfig of ${connection.source} could not be loaded` };
  }
  try {
    return { value: await read(client) };
  } catch (error) {
    return { unavailable: error instanceof Error ? error.message : String(error) };
  } finally {
    await client.close();
  }
}
