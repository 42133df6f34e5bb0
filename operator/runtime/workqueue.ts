/**
 * A keyed work queue with client-go's semantics: a key is queued at most once (dirty set), is never handed to two
 * workers at once (processing set; an add during processing is queued again when the worker calls done), can be
 * added after a delay, and is retried with the rate limiter's backoff. A key is the text of an ObjectKey
 * (`formatObjectKey`), not the object: a Set or a Map dedupes only primitives. The controller turns ObjectKeys into
 * text on the way in and back on the way out.
 *
 * Fair across tenants, by worker time: keys are grouped (by the namespace of a `namespace/name` key), first in,
 * first out within a group, and the next key comes from the waiting group that has used the least worker time
 * (start-time fair queueing: each group's clock advances by the time workers held its keys; a group that was idle
 * starts level with the busiest, so idling banks no credit; ties go round-robin). A namespace that queues
 * thousands of keys at once waits behind its own keys, not every other namespace behind it; and one whose
 * reconciles cost more (a flood of new instances, four writes each, beside tenants whose rollouts need one or two)
 * gets no more of the workers' time for it: counted in turns, the hostile-tenants chaos's flood of 100 instances
 * took 41 % of the worker time while it was one namespace of six. With one namespace this is plain FIFO.
 * client-go's queue is FIFO only.
 *
 * Two priorities, as controller-runtime's priority queue: a key added at "low" (the operator's own look at everything,
 * after a start or on the periodic resync, when nothing changed) is handed out only while no key waits at "normal"
 * (news: an object changed, a retry, a requeue). After a restart or a leader change at 10,000 instances, or with
 * chart instances whose first look renders again, a tenant's change is served at once instead of behind the fleet.
 * The higher priority wins when a key is added at both (a low key added at normal goes to the back of the normal
 * keys); fairness between namespaces holds within each priority.
 *
 * A group's waiting keys at each priority are an {@link ArrivalOrder}: appending, taking the oldest and promoting one
 * are O(1). With arrays, `splice(indexOf)` and `shift` made promoting every key of a 50,000-key fleet cost 10 s of
 * the event loop, and draining 200,000 keys of one namespace 9.8 s.
 */
import { realClock, type Clock, type TimerHandle } from "../../kube/clock.ts";
import { namespaceOfKey } from "../../kube/object-key.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate-limiter.ts";

/** "low": a look the operator takes on its own (first list, resync); "normal": everything else. */
export type Priority = "normal" | "low";

/** Hooks for the workqueue_* metrics; see metrics.ts for the Prometheus implementation. */
export interface QueueMetrics {
  /** A key entered the dirty set (workqueue_adds_total). */
  added(): void;
  /** Keys waiting to be handed out, at each priority (workqueue_depth). */
  depth(waiting: Readonly<Record<Priority, number>>): void;
  /** A key was scheduled for a later retry (workqueue_retries_total). */
  retried(): void;
  /** Seconds a key waited in the queue before a worker took it (workqueue_queue_duration_seconds). */
  queued(seconds: number): void;
  /** Seconds a worker held a key (workqueue_work_duration_seconds). */
  worked(seconds: number): void;
}

export interface WorkQueueOptions {
  /** @default realClock */
  readonly clock?: Clock;
  /** @default defaultControllerRateLimiter(clock) */
  readonly rateLimiter?: RateLimiter;
  readonly metrics?: QueueMetrics;
  /**
   * The fairness group of a key.
   * @default its namespace, the key read as an ObjectKey's text (`formatObjectKey`; "" for a cluster-scoped one)
   */
  readonly groupOf?: (key: string) => string;
}

export class WorkQueue {
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter;
  private readonly metrics: QueueMetrics | undefined;
  private readonly groupOf: (key: string) => string;
  /** Keys waiting to be handed out, per group and priority, in arrival order; groups in turn order (for ties). */
  private readonly groups = new Map<string, Record<Priority, ArrivalOrder>>();
  /** Keys waiting at each priority, in all groups. */
  private readonly waitingAt: Record<Priority, number> = { normal: 0, low: 0 };
  /** Keys that wait, or will wait again when their worker is done, at "low" (the others are at "normal"). */
  private readonly low = new Set<string>();
  /**
   * Worker time (ms) each group has used, on a shared virtual clock; kept while the group has keys waiting or held,
   * or is ahead of the clock (a debt that going idle must not erase).
   */
  private readonly used = new Map<string, number>();
  /**
   * Idle groups kept in `used` only for a debt ahead of the clock, looked at again as the clock moves: a group
   * that never has a key again (a deleted namespace) is dropped once the clock passes its debt.
   */
  private readonly debtors = new Set<string>();
  /** Keys handed out since the debtors were last looked at; they are once per as many keys as there are debtors. */
  private takenSinceDebtors = 0;
  /** The virtual clock: the used time of the last group handed a key, the level an idle group comes back at. */
  private virtualTimeMs = 0;
  /** Keys that need processing: queued, or added again while processing. */
  private readonly dirty = new Set<string>();
  /** Keys a worker holds, with when it took them. */
  private readonly processing = new Map<string, number>();
  /** When each queued key entered the queue, for the queue latency metric. */
  private readonly enqueuedAt = new Map<string, number>();
  /** Delayed adds: at most one timer per key, the earliest wins. */
  private readonly delayed = new Map<string, { readonly at: number; readonly timer: TimerHandle }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.metrics = options.metrics;
    this.groupOf = options.groupOf ?? namespaceOfKey;
  }

  /**
   * Marks `key` as needing work. A key already queued stays queued once (at the higher of its priorities); a key in
   * progress is re-queued on done.
   */
  add(key: string, priority: Priority = "normal"): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) {
      if (priority === "normal" && this.low.has(key)) this.promote(key);
      return;
    }
    this.dirty.add(key);
    if (priority === "low") this.low.add(key);
    this.metrics?.added();
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /**
   * Waits for the next key and marks it as processing; the caller must call `done(key)` afterwards.
   * Resolves undefined once the queue is shut down: keys still queued are not handed out then (a controller is
   * level-based, so the next leader or start picks them up again from the informers).
   */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.take();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Ends the processing of `key`; if it was added meanwhile, queues it again. */
  done(key: string): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    const workedMs = this.clock.monotonicMs() - startedAt;
    this.metrics?.worked(workedMs / 1000);
    const group = this.groupOf(key);
    this.used.set(group, (this.used.get(group) ?? this.virtualTimeMs) + workedMs);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
    else this.forgetIdle(group);
    if (this.processing.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * Adds `key` after `delayMs`; the earliest of the pending delayed adds of one key wins, and an add now (a delay
   * of 0) cancels a pending later one, which would only reconcile the key a second time.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    this.metrics?.retried();
    const pending = this.delayed.get(key);
    if (delayMs <= 0) {
      if (pending) {
        this.clock.clearTimeout(pending.timer);
        this.delayed.delete(key);
      }
      return this.add(key);
    }
    const at = this.clock.monotonicMs() + delayMs;
    if (pending) {
      if (pending.at <= at) return;
      this.clock.clearTimeout(pending.timer);
    }
    const timer = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { at, timer });
  }

  /**
   * Adds `key` now and cancels a pending delayed add of it: what the key waited for has happened, and the later
   * look would only reconcile it a second time (and, if it starts the wait anew, again and again).
   */
  addNow(key: string): void {
    const pending = this.delayed.get(key);
    if (pending) {
      this.clock.clearTimeout(pending.timer);
      this.delayed.delete(key);
    }
    this.add(key);
  }

  /** Adds `key` after the rate limiter's backoff for it. */
  addRateLimited(key: string): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Resets the backoff of `key` (after a success). It does not remove a pending add. */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** True when `key` is already marked for work (waiting, or added again while a worker holds it): an add merges. */
  isQueued(key: string): boolean {
    return this.dirty.has(key);
  }

  /** Keys waiting to be handed out (excludes delayed and in-progress keys). */
  get length(): number {
    return this.waitingAt.normal + this.waitingAt.low;
  }

  /** Keys waiting at `priority`. */
  waitingWith(priority: Priority): number {
    return this.waitingAt[priority];
  }

  /** Groups whose worker time the queue keeps: those with keys waiting or held, and idle ones still ahead. */
  get groupsKept(): number {
    return this.used.size;
  }

  /** Keys currently held by workers. */
  get inFlight(): number {
    return this.processing.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops intake: adds are ignored, delayed adds are cancelled, waiting and future `get`s resolve undefined. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) this.clock.clearTimeout(timer);
    this.delayed.clear();
    for (const resolve of this.waiters.splice(0)) resolve(undefined);
  }

  /** Shuts down and resolves once every key handed out has been marked done. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private push(key: string): void {
    const group = this.groupOf(key);
    const priority: Priority = this.low.has(key) ? "low" : "normal";
    const keys = this.groups.get(group);
    if (keys) keys[priority].add(key);
    else {
      const waiting = { normal: new ArrivalOrder(), low: new ArrivalOrder() };
      waiting[priority].add(key);
      this.groups.set(group, waiting);
      // Back from idle: level with the clock, not behind it (no banked credit), nor forgiven a debt.
      this.used.set(group, Math.max(this.used.get(group) ?? 0, this.virtualTimeMs));
    }
    this.waitingAt[priority] += 1;
    this.enqueuedAt.set(key, this.clock.monotonicMs());
    this.metrics?.depth({ ...this.waitingAt });
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.take());
  }

  /** Moves a key that waits (or will wait again) at "low" to "normal", behind the keys already there. */
  private promote(key: string): void {
    this.low.delete(key);
    if (this.processing.has(key)) return;
    const keys = this.groups.get(this.groupOf(key))!;
    keys.low.delete(key);
    keys.normal.add(key);
    this.waitingAt.low -= 1;
    this.waitingAt.normal += 1;
    this.metrics?.depth({ ...this.waitingAt });
  }

  private take(): string | undefined {
    // Normal keys first; among the groups with keys at that priority, the one that has used the least worker time,
    // the first in turn order among equals.
    const priority: Priority = this.waitingAt.normal > 0 ? "normal" : "low";
    let group: string | undefined;
    let least = Infinity;
    for (const [candidate, keys] of this.groups) {
      if (keys[priority].size === 0) continue;
      const used = this.used.get(candidate) ?? this.virtualTimeMs;
      if (used < least) [group, least] = [candidate, used];
    }
    if (group === undefined) return undefined;
    this.virtualTimeMs = Math.max(this.virtualTimeMs, least);
    if (++this.takenSinceDebtors >= this.debtors.size) this.settleDebts();
    const keys = this.groups.get(group)!;
    const key = keys[priority].shift();
    // The group goes to the back of the line while it has keys left: among equals, one key per group per turn.
    this.groups.delete(group);
    if (keys.normal.size + keys.low.size > 0) this.groups.set(group, keys);
    this.waitingAt[priority] -= 1;
    this.low.delete(key);
    const now = this.clock.monotonicMs();
    this.metrics?.depth({ ...this.waitingAt });
    this.metrics?.queued((now - (this.enqueuedAt.get(key) ?? now)) / 1000);
    this.enqueuedAt.delete(key);
    this.dirty.delete(key);
    this.processing.set(key, now);
    return key;
  }

  /**
   * Drops the used time of a group with nothing waiting or held that is not ahead of the clock; one ahead is kept as
   * a debtor until the clock passes it (bounded memory: the groups seen lately, not every group ever seen).
   */
  private forgetIdle(group: string): void {
    this.debtors.delete(group);
    if (this.groups.has(group)) return;
    for (const key of this.processing.keys()) if (this.groupOf(key) === group) return;
    if ((this.used.get(group) ?? 0) > this.virtualTimeMs) this.debtors.add(group);
    else this.used.delete(group);
  }

  /** Forgets the debtors the clock has passed, and those active again (their `done` looks at them anew). */
  private settleDebts(): void {
    this.takenSinceDebtors = 0;
    for (const group of [...this.debtors]) this.forgetIdle(group);
  }
}

/**
 * Keys in the order they arrived, each at most once: add, delete and shift are O(1). A Set iterates in insertion
 * order, but reading its first key from a fresh iterator steps over every deleted slot still before it, which a
 * queue that takes from the front piles up; one iterator kept from shift to shift steps over each slot once. It sees
 * keys added after it was made (a Set's iterators are live), and every key before it has been shifted, so its next
 * key is always the oldest.
 */
class ArrivalOrder {
  private readonly keys = new Set<string>();
  private cursor: Iterator<string> | undefined;

  get size(): number {
    return this.keys.size;
  }

  add(key: string): void {
    this.keys.add(key);
  }

  delete(key: string): void {
    this.keys.delete(key);
  }

  /** Removes and returns the oldest key; only when there is one. */
  shift(): string {
    this.cursor ??= this.keys.values();
    const key = this.cursor.next().value as string;
    this.keys.delete(key);
    return key;
  }
}
