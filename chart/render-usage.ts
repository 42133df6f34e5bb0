/**
 * What a render takes of its namespace's budget (the platform policy's `--namespace-max-replicas` and
 * `--namespace-max-storage`, or the namespace's labels): admission sees only `spec.replicas` and `spec.storage`,
 * while a chart decides its workloads' sizes itself. Counted as the most the render may run: a workload's
 * `spec.replicas` (1 when unset, as the apiserver defaults it), or the `maxReplicas` of an autoscaler that targets
 * it when that is more; storage is each StatefulSet's claim templates × those replicas, the only storage a render
 * may claim (ephemeral volumes and claims of volumes that exist are refused before: claim-sizes.ts). Pure.
 */
import { claimRequests } from "./claim-sizes.ts";
import type { RenderedObject } from "./manifests.ts";
import { record } from "./pod-templates.ts";
import { autoscalerKinds, replicatedKinds } from "./render-platform-limits.ts";

/** Pods and volume bytes a render may take; storage in nano-bytes (api/quantity.ts), as budgets compare it. */
export interface RenderUsage {
  readonly replicas: bigint;
  readonly storageNanos: bigint;
}

/** The usage of `objects`: every replicated workload's most replicas, and its StatefulSet claims × those. */
export function renderUsage(objects: readonly RenderedObject[]): RenderUsage {
  const scaledTo = autoscalerCeilings(objects);
  let replicas = 0n;
  let storageNanos = 0n;
  for (const object of objects) {
    const kind = `${object.apiVersion}/${object.kind}`;
    if (!replicatedKinds.has(kind)) continue;
    const written = record(object["spec"])["replicas"];
    const own = wholeCount(written) ?? 1n;
    const ceiling = scaledTo.get(`${object.kind}/${object.metadata.name}`) ?? 0n;
    const most = ceiling > own ? ceiling : own;
    replicas += most;
    if (kind === "apps/v1/StatefulSet") storageNanos += claimTemplatesNanos(object) * most;
  }
  return { replicas, storageNanos };
}

/** The workloads (`Kind/name`) an autoscaler of the render scales: their replicas are the autoscaler's to set. */
export function autoscaledWorkloads(objects: readonly RenderedObject[]): ReadonlySet<string> {
  return new Set(autoscalerCeilings(objects).keys());
}

/** The highest `maxReplicas` of the autoscalers aimed at each `Kind/name`. */
function autoscalerCeilings(objects: readonly RenderedObject[]): Map<string, bigint> {
  const ceilings = new Map<string, bigint>();
  for (const object of objects) {
    if (!autoscalerKinds.has(`${object.apiVersion}/${object.kind}`)) continue;
    const spec = record(object["spec"]);
    const target = record(spec["scaleTargetRef"]);
    const max = wholeCount(spec["maxReplicas"]);
    if (max === undefined || typeof target["kind"] !== "string" || typeof target["name"] !== "string") continue;
    const key = `${target["kind"]}/${target["name"]}`;
    const known = ceilings.get(key);
    if (known === undefined || max > known) ceilings.set(key, max);
  }
  return ceilings;
}

/**
 * The bytes (× 10⁹) one replica's claim templates request. A size that cannot be counted is refused before
 * (claim-sizes.ts), and one left out is the apiserver's to refuse.
 */
function claimTemplatesNanos(statefulSet: RenderedObject): bigint {
  return claimRequests(statefulSet).reduce((nanos, { size }) => nanos + (size?.nanos ?? 0n), 0n);
}

function wholeCount(value: unknown): bigint | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined;
}
