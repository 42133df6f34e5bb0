/**
 * What this replica admitted that its cache may not show yet. Budgets are counted from the informer cache, which
 * learns of a write only when the watch delivers it, a few milliseconds after the apiserver stored it: without
 * this, a tenant creating instances 10 at a time gets each of them judged against the same stale count and runs
 * past the budget (the hostile-tenant chaos suite saw 25 admitted against 20). So the judgements that count a
 * namespace run one after another (`serially`), and each admitted create or change is remembered for a while
 * (`record`) and counted beside what the cache holds (`merge`), a change as the larger of it and the cached
 * version: the webhook's port does not authenticate its caller, so a review that did not come from the apiserver
 * (a shrink to 0 replicas, say) must not lower a namespace's count; a real shrink counts once the cache shows it.
 * A remembered write that never landed (another webhook refused it) is counted until it expires: the error is on
 * the safe side. What is remembered is bounded, since every admitted write is: the fields a budget
 * reads, for at most `rememberMs`, at most `maxRemembered` writes.
 *
 * Per replica: two replicas judging at once can still each admit the last slot (a ResourceQuota is the hard cap).
 * Written by hand: no library keeps admission's own writes.
 */
import type { MyAppInstanceObject } from "../../api/index.ts";
import type { Clock } from "../../kube/clock.ts";
import { realClock } from "../../kube/clock.ts";
import { parseQuantity } from "../../api/quantity.ts";
import type { AdmittedInstance } from "./validate.ts";

export interface AdmittedWritesOptions {
  /** How long an admitted write is counted without the cache showing it. @default 30_000 */
  readonly rememberMs?: number;
  /** The most writes remembered at once, the oldest forgotten first. @default 10_000 */
  readonly maxRemembered?: number;
  readonly clock?: Pick<Clock, "monotonicMs">;
}

interface Remembered {
  readonly at: number;
  /** What a budget reads of it: name, namespace, replicas and storage (not the values, which may be large). */
  readonly instance: MyAppInstanceObject;
}

export class AdmittedWrites {
  private readonly byNamespace = new Map<string, Map<string, Remembered>>();
  /** Every remembered write by `namespace/name`, oldest first: expiry and the cap drop from the front. */
  private readonly byAge = new Map<string, Remembered>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly rememberMs: number;
  private readonly maxRemembered: number;
  private readonly clock: Pick<Clock, "monotonicMs">;

  constructor(options: AdmittedWritesOptions = {}) {
    this.rememberMs = options.rememberMs ?? 30_000;
    this.maxRemembered = options.maxRemembered ?? 10_000;
    this.clock = options.clock ?? realClock;
  }

  /** Runs `judge` after every earlier judgement of `namespace` has finished (failed ones included). */
  serially<T>(namespace: string, judge: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(namespace) ?? Promise.resolve();
    const result = previous.then(judge, judge);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(namespace, settled);
    void settled.then(() => {
      if (this.queues.get(namespace) === settled) this.queues.delete(namespace);
    });
    return result;
  }

  /** Remembers an admitted create or change of `instance` (not a dry-run: nothing is stored then). */
  record(instance: AdmittedInstance): void {
    const now = this.clock.monotonicMs();
    const id = `${instance.namespace}/${instance.name}`;
    const { replicas, storage } = instance.spec;
    const remembered: Remembered = {
      at: now,
      instance: {
        metadata: { name: instance.name, namespace: instance.namespace },
        spec: { replicas, ...(storage !== undefined ? { storage } : {}) },
      } as MyAppInstanceObject,
    };
    this.byAge.delete(id);
    this.byAge.set(id, remembered);
    const kept = this.byNamespace.get(instance.namespace) ?? new Map<string, Remembered>();
    kept.set(instance.name, remembered);
    this.byNamespace.set(instance.namespace, kept);
    this.dropOld(now);
  }

  /** Writes remembered now (for tests and the cap). */
  get size(): number {
    return this.byAge.size;
  }

  /**
   * The namespace's instances as far as this replica knows: `cached`, with each write it admitted since (and
   * remembers) beside them for a create the cache lacks, and for a change the larger of it and the cached version.
   */
  merge(namespace: string, cached: readonly MyAppInstanceObject[]): readonly MyAppInstanceObject[] {
    this.dropOld(this.clock.monotonicMs());
    const kept = this.byNamespace.get(namespace);
    if (!kept) return cached;
    // An admitted change counts the larger replicas and storage of the two specs, never the status: a chart
    // instance's status says what its last render takes of the budget (namespace-budget.ts).
    const merged = cached.map((instance) => {
      const remembered = kept.get(instance.metadata.name ?? "");
      return remembered
        ? { ...instance, spec: { ...instance.spec, ...larger(remembered.instance, instance) } }
        : instance;
    });
    const known = new Set(cached.map((instance) => instance.metadata.name));
    for (const [name, remembered] of kept) if (!known.has(name)) merged.push(remembered.instance);
    return merged;
  }

  /** Forgets expired writes, and the oldest beyond the cap: each write is looked at once, from the front. */
  private dropOld(now: number): void {
    for (const [id, remembered] of this.byAge) {
      if (now - remembered.at < this.rememberMs && this.byAge.size <= this.maxRemembered) break;
      this.byAge.delete(id);
      const namespace = remembered.instance.metadata.namespace ?? "";
      const kept = this.byNamespace.get(namespace);
      kept?.delete(remembered.instance.metadata.name ?? "");
      if (kept?.size === 0) this.byNamespace.delete(namespace);
    }
  }
}

/** The larger replicas and storage of an admitted change and the cached version (a storage it cannot read: cached). */
function larger(
  admitted: MyAppInstanceObject,
  cached: MyAppInstanceObject,
): Pick<MyAppInstanceObject["spec"], "replicas" | "storage"> {
  const replicas = Math.max(admitted.spec.replicas ?? 0, cached.spec.replicas ?? 0);
  const [wanted, held] = [admitted.spec.storage, cached.spec.storage];
  const storage =
    wanted === undefined || held === undefined
      ? (wanted ?? held)
      : (parseQuantity(wanted)?.nanos ?? 0n) > (parseQuantity(held)?.nanos ?? 0n)
        ? wanted
        : held;
  return { replicas, ...(storage !== undefined ? { storage } : {}) };
}
