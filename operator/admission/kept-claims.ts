/**
 * The storage a namespace's kept volume claims hold beyond what its instances' specs count. The built-in
 * template's StatefulSets keep their claims when scaled down (`whenScaled: Retain`) and, with
 * `storageReclaimPolicy: Retain` (the default), when their instance is deleted: the data outlives the spec that
 * counted it. A storage budget that counted specs only could be filled, emptied by a scale-down or a delete, and
 * filled again, with every claim still on disk. So the budget counts, besides every instance's spec, each claim the
 * operator made that no instance's spec counts: one whose instance is gone, or whose ordinal is past its instance's
 * replicas. A claim of the instance being judged counts as its own (a recreated instance gets its claims back).
 * A chart's claims carry the chart's labels, not the operator's: they are counted by the render
 * (`status.chartUsage`), not here. Pure.
 */
import { instanceLabelValue, parseQuantity } from "../../api/index.ts";

/** A volume claim the operator's StatefulSets made, as far as the budget reads it. */
export interface ClaimFacts {
  /** `data-<StatefulSet>-<ordinal>`. */
  readonly name: string;
  /** Its `app.kubernetes.io/instance` label: the instance that made it, as {@link instanceLabelValue} writes it. */
  readonly instance: string | undefined;
  /** `spec.resources.requests.storage`, as written. */
  readonly storage: string | undefined;
}

/** An instance as far as its claims go: its name and replicas. */
export interface ClaimOwner {
  readonly metadata: { readonly name?: string | undefined };
  readonly spec?: { readonly replicas?: number | undefined } | undefined;
}

/**
 * The storage (bytes × 10⁹, as budgets count it) that `claims` hold beyond what `owners`' specs count, and how many
 * claims that is. `owners` are the namespace's instances, the one being judged (`judged`, with its replicas after
 * the change) among them or not.
 */
export function keptClaimStorage(
  claims: readonly ClaimFacts[],
  owners: readonly ClaimOwner[],
  judged: { readonly name: string; readonly replicas: number },
): { readonly storage: bigint; readonly claims: number } {
  const replicasOf = new Map<string, number>();
  for (const owner of owners) {
    const name = owner.metadata.name;
    if (name !== undefined) replicasOf.set(instanceLabelValue(name), owner.spec?.replicas ?? 1);
  }
  replicasOf.set(instanceLabelValue(judged.name), judged.replicas);
  let storage = 0n;
  let count = 0;
  for (const claim of claims) {
    const replicas = claim.instance === undefined ? undefined : replicasOf.get(claim.instance);
    const ordinal = /-(\d+)$/.exec(claim.name)?.[1];
    const counted = replicas !== undefined && ordinal !== undefined && Number(ordinal) < replicas;
    if (counted) continue;
    storage += (claim.storage === undefined ? undefined : parseQuantity(claim.storage))?.nanos ?? 0n;
    count++;
  }
  return { storage, claims: count };
}
