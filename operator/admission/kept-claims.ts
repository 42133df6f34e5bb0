/**
 * The storage a namespace's kept volume claims hold beyond what its instances' specs count. The built-in
 * template's StatefulSets keep their claims when scaled down (`whenScaled: Retain`) and, with
 * `storageReclaimPolicy: Retain` (the default), when their instance is deleted: the data outlives the spec that
 * counted it. A storage budget that counted specs only could be filled, emptied by a scale-down or a delete, and
 * filled again, with every claim still on disk. So the budget counts, besides every instance's spec, each claim the
 * operator made that no instance's spec counts: one whose instance is gone or has no storage, or whose ordinal is
 * past its instance's replicas, or what it holds beyond its instance's size. A claim of the instance being judged
 * counts as its own (a recreated instance gets its claims back). A chart's claims carry the chart's labels, not the
 * operator's (or the template's, on claims a chart's StatefulSet took over): they are found by the names its
 * instance's StatefulSets give them (chart-claims.ts), and a chart
 * instance counts the larger of its usage (its render's, `status.chartUsage`) and what its StatefulSets' claims
 * hold, since the operator keeps them on a scale-down too (operator/chart/plan.ts): counting the render alone, a
 * tenant could render 5 replicas, scale to 1 and render 5 more in another instance, every claim still on disk.
 * Once a chart instance is gone its StatefulSets are, and its claims are counted by no one here (a ResourceQuota
 * on `requests.storage` is the hard cap). Pure.
 */
import { instanceLabelValue, parseQuantity } from "../../api/index.ts";
import { instanceUsage } from "./namespace-budget.ts";

/** A volume claim the operator's StatefulSets made, as far as the budget reads it. */
export interface ClaimFacts {
  /** `data-<StatefulSet>-<ordinal>`. */
  readonly name: string;
  /** Its `app.kubernetes.io/instance` label: the instance that made it, as {@link instanceLabelValue} writes it. */
  readonly instance: string | undefined;
  /** `spec.resources.requests.storage`, as written. */
  readonly storage: string | undefined;
  /**
   * The instance whose chart's StatefulSet made it, by its name (chart-claims.ts), whatever its labels (a chart's,
   * or the template's on a claim the chart took over). Such a claim's `instance` is not read.
   */
  readonly chartInstance?: string;
}

/** An instance as far as its claims go: its name, replicas, and whether its spec counts storage (a size, no chart). */
export interface ClaimOwner {
  readonly metadata: { readonly name?: string | undefined };
  readonly spec?: OwnerSpec | undefined;
  readonly status?: { readonly chartUsage?: { readonly replicas: number; readonly storage: string } | undefined };
}

interface OwnerSpec {
  readonly replicas?: number | undefined;
  readonly storage?: string | undefined;
  readonly chart?: unknown;
}

/**
 * The storage (bytes × 10⁹, as budgets count it) that `claims` hold beyond what `owners`' specs count, and how many
 * claims that is. `owners` are the namespace's instances, the one being judged (`judged`, with its replicas after
 * the change) among them or not. `countedStorage`: what the budget counts for an owner (its usage). A judged chart
 * instance's own chart claims count beyond `judged.chartStorage` (what its render asks), or not at all without it
 * (a spec judged before its render: the render's check counts them).
 */
export function keptClaimStorage<Owner extends ClaimOwner>(
  claims: readonly ClaimFacts[],
  owners: readonly Owner[],
  judged: { readonly name: string; readonly chartStorage?: bigint } & OwnerSpec,
  countedStorage: (owner: Owner) => bigint = (owner) => instanceUsage(owner).storage,
): { readonly storage: bigint; readonly claims: readonly string[] } {
  // Who counts a claim labelled as an instance's (the built-in template's): a spec with a size those of the replicas
  // it runs, up to that size; a spec without one (a namesake) none, nor a chart instance of that name: the claims its
  // chart's StatefulSets make (took over from the template) are found by their names (`chartInstance`), and any other
  // (a deleted instance's, its name now a chart's that makes no such claims) holds storage no render counts.
  const countedBy = new Map<string, { readonly replicas: number; readonly size: bigint }>();
  const add = (name: string, spec: OwnerSpec | undefined) => {
    const size = typeof spec?.storage === "string" ? parseQuantity(spec.storage)?.nanos : undefined;
    if (spec?.chart !== undefined || size === undefined) countedBy.delete(instanceLabelValue(name));
    else countedBy.set(instanceLabelValue(name), { replicas: spec?.replicas ?? 1, size });
  };
  for (const owner of owners) if (owner.metadata.name !== undefined) add(owner.metadata.name, owner.spec);
  add(judged.name, judged);
  const chart = chartClaimStorage(claims, owners, judged, countedStorage);
  let storage = chart.storage;
  const kept: string[] = [...chart.claims];
  for (const claim of claims) {
    if (claim.chartInstance !== undefined) continue;
    const size = claimSize(claim);
    const owner = claim.instance === undefined ? undefined : countedBy.get(claim.instance);
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

/**
 * What the claims of chart instances' StatefulSets hold beyond what the budget counts for each instance: the claims
 * of replicas scaled away, which its render no longer counts. All of an instance's claims are named once it holds
 * more than it is counted for.
 */
function chartClaimStorage<Owner extends ClaimOwner>(
  claims: readonly ClaimFacts[],
  owners: readonly Owner[],
  judged: { readonly name: string; readonly chartStorage?: bigint } & OwnerSpec,
  countedStorage: (owner: Owner) => bigint,
): { readonly storage: bigint; readonly claims: readonly string[] } {
  const held = new Map<string, { storage: bigint; names: string[] }>();
  for (const claim of claims) {
    if (claim.chartInstance === undefined) continue;
    const entry = held.get(claim.chartInstance) ?? { storage: 0n, names: [] };
    entry.storage += claimSize(claim);
    entry.names.push(claim.name);
    held.set(claim.chartInstance, entry);
  }
  // What each chart instance is counted for. Claims of any other (an instance gone, whose StatefulSet goes too, or
  // one without a chart now, whose chart's StatefulSets the switch removed) are counted by no one, as above.
  const counted = new Map<string, bigint | undefined>();
  for (const owner of owners) {
    if (owner.metadata.name !== undefined && owner.spec?.chart !== undefined) {
      counted.set(owner.metadata.name, countedStorage(owner));
    }
  }
  if (judged.chart !== undefined) counted.set(judged.name, judged.chartStorage);
  else counted.delete(judged.name);
  let storage = 0n;
  const kept: string[] = [];
  for (const [instance, { storage: holds, names }] of held) {
    if (!counted.has(instance)) continue;
    const countedFor = counted.get(instance);
    // The judged instance without a render to compare with: its render's own check counts them.
    if (countedFor === undefined || holds <= countedFor) continue;
    storage += holds - countedFor;
    kept.push(...names);
  }
  return { storage, claims: kept };
}

function claimSize(claim: ClaimFacts): bigint {
  return (claim.storage === undefined ? undefined : parseQuantity(claim.storage))?.nanos ?? 0n;
}
