/**
 * Whether the cluster serves `admissionregistration.k8s.io/v1` MutatingAdmissionPolicy and its binding (Kubernetes
 * 1.36+), for `webhooks.defaults: "auto"` (defaults-policy.ts): one discovery GET through cluster-read.ts, which
 * every authenticated user may make. A cluster that cannot answer in time is treated as one that does not serve
 * them: the mutating webhook alone then gives the defaults, which is correct everywhere, only slower.
 */
import type { ClusterConnection } from "./cluster-connection.ts";
import { readCluster } from "./cluster-read.ts";

/** Slower than this and the read gives up: a preview must not stall on a slow or absent cluster. */
export const admissionApiReadTimeoutMs = 5_000;

/** The resources a MutatingAdmissionPolicy install needs, by their discovery names. */
const defaultsPolicyResources = ["mutatingadmissionpolicies", "mutatingadmissionpolicybindings"];

/** Whether the cluster serves the policy, or why it could not be told. */
export type DefaultsPolicyServed = { readonly served: boolean } | { readonly unavailable: string };

/** Reads the cluster's `admissionregistration.k8s.io/v1` resources. */
export async function readDefaultsPolicyServed(connection: ClusterConnection): Promise<DefaultsPolicyServed> {
  const read = await readCluster(connection, admissionApiReadTimeoutMs, async (client) => {
    const list = JSON.parse(await client.raw("/apis/admissionregistration.k8s.io/v1")) as {
      resources?: readonly { name?: unknown }[];
    };
    return servesDefaultsPolicy(list);
  });
  return "unavailable" in read ? read : { served: read.value };
}

/** Whether an APIResourceList names both of the policy's resources. */
export function servesDefaultsPolicy(list: { resources?: readonly { name?: unknown }[] }): boolean {
  const names = new Set((list.resources ?? []).map((resource) => resource.name));
  return defaultsPolicyResources.every((name) => names.has(name));
}
