/**
 * Room for a fleet on the local cluster, made at run time without restarting it: enough ClusterIPs (an extra
 * ServiceCIDR, networking.k8s.io/v1, when the cluster's ranges are too small) and enough room for pods (more fake
 * nodes, cloned from a kwok node but with room for 1000 pods each, fewer nodes for kwok to keep Ready). Room counts
 * pod slots and the cpu and memory every fleet pod requests (the API's default requests): a kwok node's default
 * 32 cpus hold only 320 of them. Idempotent: a cluster that already holds the fleet (the local cluster's fleet settings) is
 * left as it is. What it cannot change at run time: the controller-manager's
 * and scheduler's client QPS (flags); the floor figure shows what they cost.
 */
import { defaultResources } from "../../api/index.ts";
import { parseQuantity } from "../../api/quantity.ts";
import { nodeResources } from "../../tools/lib/cluster.ts";
import type { KubeClient, KubeObject } from "../../kube/index.ts";
import { waitUntil } from "./wait.ts";

type Node = KubeObject & {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: {
    allocatable?: Record<string, string>;
    capacity?: Record<string, string>;
    conditions?: { type: string; status: string }[];
  };
};
type ServiceCidr = KubeObject & { spec?: { cidrs?: string[] } };

/** The ServiceCIDR the benchmark adds: a /16 (65,534 addresses) outside the usual defaults. */
export const fleetServiceCidr = { name: "myapp-bench-fleet", cidr: "10.208.0.0/16" } as const;
const nodePrefix = "myapp-bench-node-";
const podsPerNewNode = 1000;

/** How many fleet pods (each requesting the API's default cpu and memory) fit on `node`, by slots, cpu and memory. */
export function podRoom(node: { status?: { allocatable?: Record<string, string> } }): number {
  // Quantities ("110", "4k", "32", "256Gi") in nanounits, divided by what one pod takes.
  const nanos = (text: string | undefined) => parseQuantity(text ?? "0")?.nanos ?? 0n;
  const fits = (have: string | undefined, each: string) => Number(nanos(have) / nanos(each));
  const allocatable = node.status?.allocatable ?? {};
  return Math.min(
    fits(allocatable["pods"], "1"),
    fits(allocatable["cpu"], defaultResources.requests.cpu),
    fits(allocatable["memory"], defaultResources.requests.memory),
  );
}

/** Usable addresses of an IPv4 CIDR (network and broadcast excluded); 0 for anything else. */
export function cidrSize(cidr: string): number {
  const match = /^\d+\.\d+\.\d+\.\d+\/(\d+)$/.exec(cidr);
  if (!match) return 0;
  return Math.max(0, 2 ** (32 - Number(match[1])) - 2);
}

/**
 * Makes room for `services` more Services and `pods` more pods; `log` says what it changed. Resolves once the
 * new nodes are Ready and the new range is served.
 */
export async function ensureFleetCapacity(
  client: KubeClient,
  need: { services: number; pods: number },
  signal: AbortSignal,
  log: (message: string) => void,
): Promise<void> {
  const cidrs = await client.list<ServiceCidr>("networking.k8s.io/v1", "ServiceCIDR");
  const addresses = cidrs.items.flatMap((c) => c.spec?.cidrs ?? []).reduce((sum, c) => sum + cidrSize(c), 0);
  const services = (await client.list("v1", "Service", { limit: 1 })) as { metadata?: { remainingItemCount?: number } };
  const usedServices = 1 + (services.metadata?.remainingItemCount ?? 0);
  if (addresses - usedServices < need.services + 50) {
    log(`Service addresses: ${addresses} in ServiceCIDRs, ${usedServices} used; adding ${fleetServiceCidr.cidr}`);
    await client.apply(
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "ServiceCIDR",
        metadata: { name: fleetServiceCidr.name },
        spec: { cidrs: [fleetServiceCidr.cidr] },
      } as KubeObject,
      { fieldManager: "myapp-bench" },
    );
    await waitUntil(
      `ServiceCIDR ${fleetServiceCidr.name} Ready`,
      async () => {
        const live = await client.find<ServiceCidr & { status?: { conditions?: { type: string; status: string }[] } }>(
          "networking.k8s.io/v1",
          "ServiceCIDR",
          fleetServiceCidr.name,
        );
        return live?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? true : undefined;
      },
      { signal, timeoutMs: 60_000 },
    );
  }

  const nodes = (await client.list<Node>("v1", "Node")).items;
  const slots = nodes.reduce((sum, n) => sum + podRoom(n), 0);
  const pods = (await client.list("v1", "Pod", { limit: 1 })) as { metadata?: { remainingItemCount?: number } };
  const usedPods = 1 + (pods.metadata?.remainingItemCount ?? 0);
  const template = nodes.find((n) => n.metadata.annotations?.["kwok.x-k8s.io/node"] === "fake");
  const perNode = podsPerNewNode;
  const missing = need.pods + 50 - (slots - usedPods);
  if (missing <= 0) return;
  if (!template) throw new Error("no kwok node (annotation kwok.x-k8s.io/node=fake) to clone for more pod capacity");
  const count = Math.ceil(missing / perNode);
  const existing = new Set(nodes.map((n) => n.metadata.name));
  const names: string[] = [];
  for (let i = 0; names.length < count; i++) if (!existing.has(`${nodePrefix}${i}`)) names.push(`${nodePrefix}${i}`);
  log(`pod slots: ${slots} on ${nodes.length} nodes, ${usedPods} used; adding ${count} kwok nodes of ${perNode}`);
  for (const name of names) {
    await client.create({
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name,
        labels: { ...template.metadata.labels, "kubernetes.io/hostname": name },
        annotations: { ...template.metadata.annotations },
      },
      spec: { ...(template.spec?.taints ? { taints: template.spec.taints } : {}) },
      status: {
        allocatable: { ...template.status?.allocatable, ...nodeResources, pods: String(perNode) },
        capacity: { ...template.status?.capacity, ...nodeResources, pods: String(perNode) },
      },
    } as KubeObject);
  }
  await waitUntil(
    `${count} new nodes Ready`,
    async () => {
      const all = (await client.list<Node>("v1", "Node")).items.filter((n) => names.includes(n.metadata.name ?? ""));
      const ready = all.filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
      return ready.length === count ? true : undefined;
    },
    { signal, timeoutMs: 120_000, intervalMs: 1_000 },
  );
}
