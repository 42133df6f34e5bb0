/**
 * The storage a namespace's kept volume claims hold beyond what its instances' specs count. The built-in
 * template's StatefulSets keep their claims when scaled down (`whenScaled: Retain`) and, with
 * `storageReclaimPolicy: Retain` (the default), when their instance is deleted: the data outlives the spec that
 * counted it. A storage budget that counted specs only could be filled, emptied by a scale-down or a delete, and
 * filled again, with every claim still on disk. So the budget counts, besides every instance's spec, each claim the
 * operator made that no instance's spec counts: one whose instance is gone or has no storage, or whose ordinal is
 * past its instance's replicas, or what it holds beyond its instance's size. A claim of the instance being judged
 * counts as its own (a recreated instance gets its claims back). A chart instance's are counted by it (its usage
 * takes its render's, `status.chartUsage`); a chart's claims carry the chart's labels, not the operator's, and once
 * their instance is gone are counted by no one here (a ResourceQuota on `requests.storage` is the hard cap). Pure.
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

/** An instance as far as its claims go: its name, replicas, and whether its spec counts storage (a size, no chart). */
export interface ClaimOwner {
  readonly metadata: { readonly name?: string | undefined };
  readonly spec?: OwnerSpec | undefined;
}

interface OwnerSpec {
  readonly replicas?: number | undefined;
  readonly storage?: string | undefined;
  readonly chart?: unknown;
}

/**
 * The storage (bytes × 10⁹, as budgets count it) that `claims` hold beyond what `owners`' specs count, and how many
 * claims that is. `owners` are the namespace's instances, the one being judged (`judged`, with its replicas after
 * the change) among them or not.
 */
export function keptClaimStorage(
  claims: readonly ClaimFacts[],
  owners: readonly ClaimOwner[],
  judged: { readonly name: string } & OwnerSpec,
): { readonly storage: bigint; readonly claims: readonly string[] } {
  // Who counts a claim labelled as an instance's: a chart instance every one (its usage is the larger of its spec's
  // and its render's, which the chart's StatefulSets take, claims it took over from the template included); a
  // spec with a size those of the replicas it runs, up to that size; a spec without one (a namesake) none.
  const countedBy = new Map<string, "chart" | { readonly replicas: number; readonly size: bigint }>();
  const add = (name: string, spec: OwnerSpec | undefined) => {
    const size = typeof spec?.storage === "string" ? parseQuantity(spec.storage)?.nanos : undefined;
    if (spec?.chart !== undefined) countedBy.set(instanceLabelValue(name), "chart");
    else if (size === undefined) countedBy.delete(instanceLabelValue(name));
    else countedBy.set(instanceLabelValue(name), { replicas: spec?.replicas ?? 1, size });
  };
  for (const owner of owners) if (owner.metadata.name !== undefined) add(owner.metadata.name, owner.spec);
  add(judged.name, judged);
  let storage = 0n;
  const kept: string[] = [];
  for (const claim of claims) {
    const size = (claim.storage === undefined ? undefined : parseQuantity(claim.storage))?.nanos ?? 0n;
    const owner = claim.instance === undefined ? undefined : countedBy.get(claim.instance);
    if (owner === "chart") continue;
    const ordinal = /-(\d+)$/.exec(claim.name)?.[1];
    const covered = owner !== undefined && ordinal !== undefined && Number(ordinal) < owner.replicas;
    // A claim its instance's spec counts holds only what it holds beyond that spec's size (a smaller recreation).
    const beyond = covered ? (size > owner.size ? size - owner.size : 0n) : size;
    if (beyond === 0n) continue;
    storage += beyond;
    kept.push(claim.name);
  }
  return { storage, claims: kept };
}
