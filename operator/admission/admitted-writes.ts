/**
 * What this replica admitted that its cache may not show yet. Budgets are counted from the informer cache, which
 * learns of a write only when the watch delivers it, a few milliseconds after the apiserver stored it: without
 * this, a tenant creating instances 10 at a time gets each of them judged against the same stale count and runs
 * past the budget (the hostile-tenant chaos suite saw 25 admitted against 20). So the judgements that count a
 * namespace run one after another (`serially`), and each admitted create or growth is remembered for a while
 * (`record`) and counted beside what the cache holds (`merge`), a change as the larger of it and the cached
 * version: the webhook's port does not authenticate its caller, so a review that did not come from the apiserver
 * (a shrink to 0 replicas, say) must not lower a namespace's count; a real shrink counts once a list from the
 * apiserver shows it (review.ts reads one afresh before a budget refuses: it decides every write that had
 * `settleMs` to be stored before it began), or once the cache shows it and no growth of it is remembered.
 *
 * Nor may a forged create or growth hold a namespace's budget on its own word: a write that list cannot show yet
 * that alone turns a verdict into a refusal is a `suspect`, and once it has had `settleMs` to be stored (a real one
 * has), the apiserver is asked for it (`confirm`): forgotten if it has no such instance, counted as the apiserver
 * has it if it does. review.ts then judges again, counting every write remembered then (a burst's other writes
 * too: all refused by one forged write, they must not pass the budget together once it is forgotten); a forger's
 * fresh writes are the next round's suspects, within the review's deadline. What is remembered is bounded, since
 * every admitted write is: the fields a budget reads, for at most `rememberMs`, at most `maxPerNamespace` writes a
 * namespace (its own oldest forgotten first) and `maxRemembered` in all (beyond, the namespace remembering the most
 * forgets). review.ts remembers only writes that grow a namespace with a budget: a namespace must exist, and a
 * forger can only fill a real namespace's share.
 *
 * Per replica: two replicas judging at once can still each admit the last slot (a ResourceQuota is the hard cap).
 * Written by hand: no library keeps admission's own writes.
 */
import type { MyAppInstanceObject } from "../../api/index.ts";
import type { Clock } from "../../kube/clock.ts";
import { realClock } from "../../kube/clock.ts";
import { parseQuantity } from "../../api/quantity.ts";
import { grows, specUsage } from "./namespace-budget.ts";
import type { AdmittedInstance } from "./validate.ts";

export interface AdmittedWritesOptions {
  /** How long an admitted write is counted without the cache showing it. @default 30_000 */
  readonly rememberMs?: number;
  /**
   * How long an admitted write is counted on its own word alone: a real one reaches the apiserver's storage within
   * this (other webhooks, then etcd), so one the cache has not shown by then may be asked for (see
   * {@link AdmittedWrites.suspects}). @default 1_000
   */
  readonly settleMs?: number;
  /** The most writes remembered at once; beyond, the namespace remembering the most forgets its oldest. @default 10_000 */
  readonly maxRemembered?: number;
  /** The most writes remembered in one namespace, its oldest forgotten first. @default 256 */
  readonly maxPerNamespace?: number;
  readonly clock?: Pick<Clock, "monotonicMs">;
}

/** How {@link AdmittedWrites.merge} counts remembered writes. */
export interface MergeOptions {
  /** Leave out the unconfirmed ones. */
  readonly unconfirmed?: false;
  /** The instances are a list from the apiserver begun after this time (monotonicMs). */
  readonly listedAfter?: number;
}

interface Remembered {
  readonly at: number;
  /** Order of recording: a judgement's suspects are among the writes recorded before it ran. */
  readonly seq: number;
  /** What a budget reads of it: name, namespace, replicas and storage (not the values, which may be large). */
  readonly instance: MyAppInstanceObject;
  /** The apiserver was asked and has it (as this instance): it counts on the apiserver's word, not the caller's. */
  readonly confirmed: boolean;
}

/** A remembered write that alone turns a verdict into a refusal, and that the cache does not show. */
export interface Suspect {
  readonly namespace: string;
  readonly name: string;
  /** When it has been remembered {@link AdmittedWritesOptions.settleMs}: before, the apiserver may not have it yet. */
  readonly settledAt: number;
}

/** What of an instance the apiserver has: its spec's replicas and storage, or undefined when it has no such instance. */
export type LiveInstance = Pick<MyAppInstanceObject["spec"], "replicas" | "storage"> | undefined;

/** Asks for at most this many suspects of one namespace at once; the rest stay counted until asked for later. */
const maxConfirmingPerNamespace = 8;

export class AdmittedWrites {
  private readonly byNamespace = new Map<string, Map<string, Remembered>>();
  /** Every remembered write by `namespace/name`, oldest first: expiry drops from the front. */
  private readonly byAge = new Map<string, Remembered>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Confirmations in flight by `namespace/name`: one per write, whoever asks. */
  private readonly confirming = new Map<string, Promise<void>>();
  private readonly rememberMs: number;
  private readonly settleMs: number;
  private readonly maxRemembered: number;
  private readonly maxPerNamespace: number;
  private readonly clock: Pick<Clock, "monotonicMs">;
  private seq = 0;

  constructor(options: AdmittedWritesOptions = {}) {
    this.rememberMs = options.rememberMs ?? 30_000;
    this.settleMs = options.settleMs ?? 1_000;
    this.maxRemembered = options.maxRemembered ?? 10_000;
    this.maxPerNamespace = options.maxPerNamespace ?? 256;
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
    const { replicas, storage } = instance.spec;
    this.keep(instance.namespace, instance.name, { replicas, ...(storage !== undefined ? { storage } : {}) }, false);
  }

  /** The last recording so far: what {@link suspects}'s `asOf` takes. */
  get recorded(): number {
    return this.seq;
  }

  /** Writes remembered now (for tests and the cap). */
  get size(): number {
    return this.byAge.size;
  }

  /**
   * The namespace's instances as far as this replica knows: `cached`, with each write it admitted since (and
   * remembers) beside them for a create the cache lacks, and for a change the larger of it and the cached version.
   * `unconfirmed: false` leaves out every unconfirmed write (what the verdict would be without them). With
   * `listedAfter`, `cached` is a list from the apiserver begun after that time: it decides every write that had
   * `settleMs` to be stored by then (stored, it counts as listed; absent, it was forged, or deleted since).
   */
  merge(
    namespace: string,
    cached: readonly MyAppInstanceObject[],
    only: MergeOptions = {},
  ): readonly MyAppInstanceObject[] {
    this.dropOld(this.clock.monotonicMs());
    const kept = this.byNamespace.get(namespace);
    if (!kept) return cached;
    const counts = (remembered: Remembered) =>
      (remembered.confirmed || only.unconfirmed !== false) && !this.listed(remembered, only.listedAfter);
    // An admitted change counts the larger replicas and storage of the two specs, never the status: a chart
    // instance's status says what its last render takes of the budget (namespace-budget.ts).
    const merged = cached.map((instance) => {
      const remembered = kept.get(instance.metadata.name ?? "");
      return remembered && counts(remembered)
        ? { ...instance, spec: { ...instance.spec, ...larger(remembered.instance, instance) } }
        : instance;
    });
    const known = new Set(cached.map((instance) => instance.metadata.name));
    for (const [name, remembered] of kept) if (!known.has(name) && counts(remembered)) merged.push(remembered.instance);
    return merged;
  }

  /**
   * The unconfirmed writes of `namespace` that count for more than `cached` shows (a create it lacks, a change
   * larger than its version), recorded up to `asOf`, at most {@link maxConfirmingPerNamespace}; with `listedAfter`
   * (as in {@link merge}), only those the list cannot show yet. The webhook's port
   * does not authenticate its caller: a forged create counted on its word would refuse the namespace's real writes
   * for as long as it is remembered, so when these are what refuses a write, the apiserver is asked (`confirm`).
   */
  suspects(
    namespace: string,
    cached: readonly MyAppInstanceObject[],
    asOf = this.seq,
    listedAfter?: number,
  ): Suspect[] {
    const kept = this.byNamespace.get(namespace);
    if (!kept) return [];
    const byName = new Map(cached.map((instance) => [instance.metadata.name ?? "", instance]));
    const found: Suspect[] = [];
    for (const [name, remembered] of kept) {
      if (remembered.confirmed || remembered.seq > asOf || this.listed(remembered, listedAfter)) continue;
      const shown = byName.get(name);
      if (shown && !grows(specUsage(remembered.instance.spec), specUsage(shown.spec))) continue;
      found.push({ namespace, name, settledAt: remembered.at + this.settleMs });
      if (found.length === maxConfirmingPerNamespace) break;
    }
    return found;
  }

  /**
   * Asks the apiserver (`read`, a live read) whether it has the suspect's write: an instance it does not have is
   * forgotten, one it has is counted as it has it, confirmed. One question per write, whoever asks (none for one
   * answered already); a write recorded again meanwhile is left as it is (the answer may predate it). Rejects when
   * `read` does.
   */
  confirm(suspect: Suspect, read: () => Promise<LiveInstance>): Promise<void> {
    const id = `${suspect.namespace}/${suspect.name}`;
    const asking = this.confirming.get(id);
    if (asking) return asking;
    const asked = this.byAge.get(id);
    // Answered meanwhile (by another review that asked): forgotten, or confirmed.
    if (asked === undefined || asked.confirmed) return Promise.resolve();
    const confirmation = read()
      .then((live) => {
        if (this.byAge.get(id) !== asked) return;
        if (live === undefined) this.forget(id, asked);
        else this.keep(suspect.namespace, suspect.name, live, true, asked);
      })
      .finally(() => this.confirming.delete(id));
    this.confirming.set(id, confirmation);
    return confirmation;
  }

  /** Whether a list begun after `listedAfter` shows `remembered` as stored (or not at all): it had time to be. */
  private listed(remembered: Remembered, listedAfter: number | undefined): boolean {
    return listedAfter !== undefined && remembered.at + this.settleMs <= listedAfter;
  }

  private keep(
    namespace: string,
    name: string,
    spec: Pick<MyAppInstanceObject["spec"], "replicas" | "storage">,
    confirmed: boolean,
    replacing?: Remembered,
  ): void {
    const now = this.clock.monotonicMs();
    const id = `${namespace}/${name}`;
    const remembered: Remembered = {
      // A confirmation keeps the write's place and age; a new recording starts both afresh.
      at: replacing?.at ?? now,
      seq: replacing?.seq ?? ++this.seq,
      instance: { metadata: { name, namespace }, spec } as MyAppInstanceObject,
      confirmed,
    };
    const kept = this.byNamespace.get(namespace) ?? new Map<string, Remembered>();
    if (replacing) {
      this.byAge.set(id, remembered);
      kept.set(name, remembered);
    } else {
      this.byAge.delete(id);
      this.byAge.set(id, remembered);
      kept.delete(name);
      kept.set(name, remembered);
    }
    // The namespace goes to the back: the least recently written to come first (the cap's tie-break, below).
    this.byNamespace.delete(namespace);
    this.byNamespace.set(namespace, kept);
    // One namespace's flood forgets its own oldest writes, never another's.
    if (kept.size > this.maxPerNamespace) {
      const [oldest, first] = kept.entries().next().value!;
      this.forget(`${namespace}/${oldest}`, first);
    }
    this.dropOld(now);
  }

  private forget(id: string, remembered: Remembered): void {
    this.byAge.delete(id);
    const namespace = remembered.instance.metadata.namespace ?? "";
    const kept = this.byNamespace.get(namespace);
    kept?.delete(remembered.instance.metadata.name ?? "");
    if (kept?.size === 0) this.byNamespace.delete(namespace);
  }

  /**
   * Forgets expired writes (each looked at once, from the front), then, beyond the cap, the oldest of the namespace
   * remembering the most (of equals, the one written to least lately, whose writes the cache most likely shows):
   * a namespace's flood, or one under many namespace names, pushes out its own writes before another's.
   */
  private dropOld(now: number): void {
    for (const [id, remembered] of this.byAge) {
      if (now - remembered.at < this.rememberMs) break;
      this.forget(id, remembered);
    }
    while (this.byAge.size > this.maxRemembered) {
      let most: Map<string, Remembered> | undefined;
      for (const kept of this.byNamespace.values()) if (!most || kept.size > most.size) most = kept;
      const [name, oldest] = most!.entries().next().value!;
      this.forget(`${oldest.instance.metadata.namespace ?? ""}/${name}`, oldest);
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
