/**
 * The read behind the kept-claims guard (kept-claims-guard.ts): a namespace's volume claims and its
 * MyAppInstances, through cluster-read.ts; loaded only when a guarded namespace is about to be deleted. Every
 * claim, not only the built-in template's: a chart's claims carry the chart's labels, and a namespace's deletion
 * takes those (and any made by hand) all the same.
 */
import { apiVersion, kind } from "../api/index.ts";
import { NotFoundError } from "../kube/index.ts";
import type { ClusterConnection } from "./cluster-connection.ts";
import { readCluster } from "./cluster-read.ts";
import type { ClaimSummary, InstanceSummary } from "./kept-claims.ts";

/** Slower than this and the read gives up: a preview must not stall on a slow or absent cluster. */
export const namespaceReadTimeoutMs = 10_000;

export type NamespaceClaims =
  | { readonly claims: readonly ClaimSummary[]; readonly instances: readonly InstanceSummary[] }
  | { readonly unavailable: string };

/** The claims and the instances of `namespace`, or why they could not be read. */
export async function readNamespaceClaims(connection: ClusterConnection, namespace: string): Promise<NamespaceClaims> {
  const read = await readCluster(connection, namespaceReadTimeoutMs, async (client) => {
    const claims = await client.list("v1", "PersistentVolumeClaim", { namespace });
    // No CRD (the platform is gone): no instance, and every claim it left is kept.
    const instances = await client.list(apiVersion, kind, { namespace }).catch((error: unknown) => {
      if (error instanceof NotFoundError) return { items: [] };
      throw error;
    });
    return {
      claims: claims.items as readonly ClaimSummary[],
      instances: instances.items as readonly InstanceSummary[],
    };
  });
  return "unavailable" in read ? read : read.value;
}
