/**
 * The controller loop: workers take keys from the work queue, run the reconcile, and decide what happens next
 * from its explicit result (kube-rs style). A key is only an ObjectKey (namespace and name): reconciles are
 * level-based, so a dropped or merged event never loses work, it only makes the next reconcile see more.
 *
 * Keys come in and go out as ObjectKeys; inside, the queue, the backoff, the failure counts and the log lines hold
 * the key's text (`formatObjectKey`), because a Map or Set dedupes only primitives, and two `{ namespace, name }`
 * objects of one key are two entries. The text is made only from an ObjectKey, and formatObjectKey refuses a key
 * that would not read back as itself, so a key taken off the queue reads back exactly: no malformed key can reach
 * a reconcile.
 */
import type { Logger } from "pino";
import { ConflictError } from "../../kube/index.ts";
import { realClock, sleep, type Clock, type TimerHandle } from "../../kube/clock.ts";
import { formatObjectKey, parseObjectKey, type ObjectKey } from "../../kube/object-key.ts";
import { PermanentError } from "./errors.ts";
import type { OperatorMetrics, ReconcileResultLabel } from "./metrics.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate-limiter.ts";
import { OutageRecovery, type OutageRecoveryOptions } from "./recovery.ts";
import { WorkQueue, type Priority } from "./workqueue.ts";

/**
 * What a successful reconcile asks for next. `{}` means "converged: wait for a change".
 * `requeueAfterMs` asks for another look after that long even without a change, for state the operator cannot
 * watch (e.g. waiting for a rollout's progress deadline); it is not needed for children, whose events arrive anyway.
 * Failure is signalled by throwing: PermanentError (no retry until a change; one whose cause is outside the spec
 * is looked at again in the slow lane), anything else (retry: with fast backoff up to maxConsecutiveFailures
 * times, then in the slow lane until it succeeds).
 */
export interface ReconcileResult {
  readonly requeueAfterMs?: number;
  /**
   * The reconcile only looked in on work it started in the background and found it still running: neither a
   * success nor a failure, so a key that was failing keeps its failure count and backoff (work that fails again
   * and again still ends Stalled), and the look is repeated after `requeueAfterMs`.
   */
  readonly waiting?: boolean;
}

/**
 * The API writes one reconcile asked for. The controller hands each reconcile a fresh tally and logs its count on
 * the reconcile's line (`writes: N`), whether the reconcile returns or throws: a converged instance must log
 * `writes: 0`. The reconciler adds one per write it asks for, a refused one included (best in one place, e.g. the
 * client its writes go through). Not the process's writes: `myapp_operator_api_writes_total` (KubeClient's onWrite) counts every write sent,
 * the leader lease's and the event recorder's too.
 */
export interface WriteTally {
  count: number;
  /**
   * What the writes changed, one short phrase each ("Deployment/web created", "status Ready"), for the reconcile's
   * one log line: a line per write would be most of what the operator logs and of the CPU it spends doing so.
   */
  readonly changes?: string[];
}

/** What the controller hands one reconcile besides its key. */
export interface ReconcileContext {
  /** Where the reconcile counts the API writes it asks for; read for its log line once it returns or throws. */
  readonly writes: WriteTally;
}

/** One reconcile of one key (namespace "" for a cluster-scoped kind). */
export type Reconciler = (key: ObjectKey, context: ReconcileContext) => Promise<ReconcileResult>;

/**
 * Called when a key has failed `failures` consecutive times and reached maxConsecutiveFailures, and again for
 * every later failed attempt of that key (the slow retries, changes, the resync). It should record the error on
 * the object (a Stalled condition; Degraded only for a permanent cause) idempotently: writing the same condition
 * again must not change the object. `retryIntervalMs` is the slow lane's interval, for the message.
 */
export type StalledHandler = (
  key: ObjectKey,
  error: unknown,
  failures: number,
  retryIntervalMs: number,
) => Promise<void>;

export interface ControllerOptions {
  /** Names the controller in metrics (`controller`, workqueue `name`) and logs. */
  readonly name: string;
  readonly reconcile: Reconciler;
  readonly onStalled?: StalledHandler;
  readonly logger: Logger;
  /** Reconciles running at once (never two of one key). @default 1, like controller-runtime */
  readonly concurrency?: number;
  /**
   * Consecutive failures of a key retried with the fast exponential backoff: the maximum count of fast retries,
   * so no key is retried quickly forever. After that many the key is reported stalled and moves to the slow lane:
   * retried every `slowRetryIntervalMs` (with jitter) until it succeeds, never parked. With the default backoff,
   * 15 failures span about 2.7 minutes.
   * @default 15
   */
  readonly maxConsecutiveFailures?: number;
  /**
   * The slow lane's retry interval, ±10 % jitter so stalled keys do not retry in lockstep. Short enough that an
   * apiserver brown-out, a webhook outage or an RBAC rollout heals by itself; long enough that a key failing for
   * good costs a few requests an hour. A change of the object or the resync retries it at once anyway. A
   * PermanentError whose cause is outside the spec is looked at again at this interval too.
   * @default 300_000 (5 min)
   */
  readonly slowRetryIntervalMs?: number;
  /**
   * How often every key from `listKeys` is reconciled again without a change: the safety net for missed events.
   * 0 disables it (tests; the operator's `--resync-period` takes a positive number).
   * @default 36_000_000 (10 h, controller-runtime's SyncPeriod)
   */
  readonly resyncPeriodMs?: number;
  /** The keys a resync re-adds, usually the primary informer's store keys. */
  readonly listKeys?: () => Iterable<ObjectKey>;
  /**
   * Delay before retrying a key whose reconcile hit a 409 Conflict (its cached copy was stale). Fixed and short:
   * the next attempt reads a fresher copy, backoff would only slow convergence.
   * @default 100
   */
  readonly conflictRequeueMs?: number;
  /** @default defaultControllerRateLimiter(clock) */
  readonly rateLimiter?: RateLimiter;
  /** @default realClock */
  readonly clock?: Clock;
  /** For the slow lane's jitter. @default Math.random */
  readonly random?: () => number;
  readonly metrics?: OperatorMetrics;
  /**
   * Recovery from an apiserver outage (recovery.ts): `probe` tells whether the apiserver is ready (`GET /readyz`).
   * While keys fail for an outage it is asked every few seconds; once it has seen the apiserver away and back,
   * those keys are retried at once (backoff and failure count reset), paced. Off when undefined.
   */
  readonly outageRecovery?: Omit<OutageRecoveryOptions, "release" | "clock" | "logger">;
}

export class Controller {
  readonly name: string;
  /** Keyed by the keys' text (see the file's comment); only this class adds to it, from ObjectKeys. */
  private readonly queue: WorkQueue;
  private readonly options: ControllerOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly maxConsecutiveFailures: number;
  private readonly slowRetryIntervalMs: number;
  private readonly random: () => number;
  /** Consecutive failures per key (conflicts included, so a write fight stalls too); cleared by a success or a PermanentError. */
  private readonly failures = new Map<string, number>();
  private readonly recovery: OutageRecovery | undefined;
  private workers: Promise<void>[] = [];
  private resyncTimer: TimerHandle | undefined;
  private started = false;

  constructor(options: ControllerOptions) {
    const maxConsecutiveFailures = options.maxConsecutiveFailures ?? 15;
    const concurrency = options.concurrency ?? 1;
    const slowRetryIntervalMs = options.slowRetryIntervalMs ?? 300_000;
    if (!(slowRetryIntervalMs > 0)) {
      throw new Error(`controller ${options.name}: slowRetryIntervalMs must be > 0`);
    }
    if (!Number.isInteger(maxConsecutiveFailures) || maxConsecutiveFailures < 1) {
      throw new Error(`controller ${options.name}: maxConsecutiveFailures must be an integer >= 1`);
    }
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new Error(`controller ${options.name}: concurrency must be an integer >= 1`);
    }
    this.options = { ...options, concurrency };
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger.child({ controller: options.name });
    this.maxConsecutiveFailures = maxConsecutiveFailures;
    this.slowRetryIntervalMs = slowRetryIntervalMs;
    this.random = options.random ?? Math.random;
    options.metrics?.registerController(options.name);
    this.queue = new WorkQueue({
      clock: this.clock,
      rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter(this.clock),
      ...(options.metrics ? { metrics: options.metrics.queue(options.name) } : {}),
    });
    this.recovery = options.outageRecovery
      ? new OutageRecovery({
          ...options.outageRecovery,
          clock: this.clock,
          logger: this.logger,
          release: (key) => this.retryAfterOutage(key),
        })
      : undefined;
  }

  /**
   * Asks for a reconcile of `key` (from an informer event, an owner mapping, or anything else); at "low" priority
   * when nothing changed (an informer's first list), so it waits behind every change.
   *
   * @throws Error when the namespace or name holds a "/" (formatObjectKey): such a key never enters the queue.
   */
  enqueue(key: ObjectKey, priority: Priority = "normal"): void {
    this.queue.add(formatObjectKey(key), priority);
  }

  /**
   * Asks for a reconcile of `key` now, in place of a later look it asked for (work it left running in the
   * background has settled): the pending look is cancelled, so it cannot start the wait over.
   */
  wake(key: ObjectKey): void {
    this.queue.addNow(formatObjectKey(key));
  }

  /**
   * True while a worker holds a key or a key waits at normal priority: someone is waiting on this controller.
   * Keys delayed for later and the low-priority looks after a start do not count.
   */
  hasWork(): boolean {
    return this.queue.inFlight > 0 || this.queue.waitingWith("normal") > 0;
  }

  /** True when `key` is already marked for work (waiting, or added again while a worker holds it): an add merges. */
  isQueued(key: ObjectKey): boolean {
    return this.queue.isQueued(formatObjectKey(key));
  }

  /** Consecutive failures recorded for `key` (0 after a success). */
  failureCount(key: ObjectKey): number {
    return this.failures.get(formatObjectKey(key)) ?? 0;
  }

  /** Starts the workers and the resync timer; call once this process leads. Keys enqueued before wait for it. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const concurrency = this.options.concurrency ?? 1;
    for (let i = 0; i < concurrency; i++) this.workers.push(this.work());
    this.scheduleResync();
    this.logger.info(
      {
        concurrency,
        maxConsecutiveFailures: this.maxConsecutiveFailures,
        slowRetryIntervalMs: this.slowRetryIntervalMs,
      },
      "controller started",
    );
  }

  /**
   * Stops taking work and waits up to `deadlineMs` for the reconciles in flight. Resolves true when they all
   * finished, false when the deadline passed first (they are abandoned; the next leader redoes them).
   */
  async shutdown(deadlineMs: number): Promise<boolean> {
    this.recovery?.stop();
    if (this.resyncTimer) this.clock.clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    const inFlight = this.queue.inFlight;
    const drained = this.queue.shutDownWithDrain().then(() => Promise.all(this.workers).then(() => true));
    const deadline = new AbortController();
    const finished = await Promise.race([drained, sleep(this.clock, deadlineMs, deadline.signal).then(() => false)]);
    deadline.abort();
    this.logger.info({ inFlight, drained: finished }, "controller stopped");
    return finished;
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.process(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  /** Reconciles the key whose text is `key` and acts on the result. */
  private async process(key: string): Promise<void> {
    // Exact and cannot throw: the text was made by formatObjectKey (enqueue, wake, the resync).
    const objectKey = parseObjectKey(key, { clusterScoped: true });
    const startedAt = this.clock.monotonicMs();
    const writes: WriteTally = { count: 0, changes: [] };
    let outcome:
      { readonly ok: true; readonly value: ReconcileResult } | { readonly ok: false; readonly error: unknown };
    try {
      outcome = { ok: true, value: await this.options.reconcile(objectKey, { writes }) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const durationMs = this.clock.monotonicMs() - startedAt;
    const line = {
      key,
      durationMs,
      writes: writes.count,
      ...(writes.changes?.length ? { changes: writes.changes } : {}),
    };

    if (outcome.ok && outcome.value.waiting) {
      this.queue.addAfter(key, outcome.value.requeueAfterMs ?? 1_000);
      this.finish("requeue_after", durationMs);
      this.logger.debug({ ...line, result: "waiting" }, "reconciled");
      return;
    }
    if (outcome.ok) {
      this.recovery?.succeeded(key);
      const wasFailing = this.failures.delete(key);
      this.queue.forget(key);
      const requeueAfterMs = outcome.value.requeueAfterMs;
      if (requeueAfterMs !== undefined && requeueAfterMs > 0) {
        this.queue.addAfter(key, requeueAfterMs);
        this.finish("requeue_after", durationMs);
        this.logger.info({ ...line, result: "requeue_after", requeueAfterMs }, "reconciled");
      } else {
        this.finish("success", durationMs);
        this.logger.info({ ...line, result: "success", ...(wasFailing ? { recovered: true } : {}) }, "reconciled");
      }
      return;
    }

    const error = outcome.error;
    if (error instanceof PermanentError) {
      // The reconciler has reported it on the object; retrying cannot help until the object changes, or, for a
      // cause outside the spec, until someone removes it: that is looked at again in the slow lane.
      this.recovery?.forget(key);
      this.failures.delete(key);
      this.queue.forget(key);
      this.finish("error", durationMs);
      if (error.outsideSpec) {
        const recheckInMs = this.slowRetryDelay();
        this.queue.addAfter(key, recheckInMs);
        this.logger.warn(
          { ...line, result: "error", permanent: true, recheckInMs: Math.round(recheckInMs), err: error },
          "reconcile failed permanently; looking again slowly",
        );
        return;
      }
      this.logger.warn({ ...line, result: "error", permanent: true, err: error }, "reconcile failed permanently");
      return;
    }

    const failures = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failures);
    this.recovery?.failed(key, error);
    const conflict = error instanceof ConflictError;
    if (failures >= this.maxConsecutiveFailures) {
      // The fast retries are used up: report, and keep retrying in the slow lane (never park: a brown-out, a
      // webhook outage or an RBAC rollout must heal without anyone touching the object).
      this.queue.forget(key);
      const retryInMs = this.slowRetryDelay();
      this.queue.addAfter(key, retryInMs);
      this.finish("error", durationMs);
      this.logger.error(
        { ...line, result: "error", failures, stalled: true, retryInMs: Math.round(retryInMs), err: error },
        "reconcile stalled; retrying slowly",
      );
      await this.reportStalled(key, objectKey, error, failures);
      return;
    }
    if (conflict) {
      this.queue.addAfter(key, this.options.conflictRequeueMs ?? 100);
      this.finish("requeue", durationMs);
      this.logger.info({ ...line, result: "requeue", failures, conflict: true, err: error }, "reconcile conflicted");
      return;
    }
    this.queue.addRateLimited(key);
    this.finish("error", durationMs);
    this.logger.warn({ ...line, result: "error", failures, err: error }, "reconcile failed");
  }

  /**
   * The apiserver is back after an outage that failed `key`: retry it now, as a fresh start. Its failure count
   * goes too, so a conflict on the stale cache right after the outage is not the failure that tips it into the
   * slow lane; a Stalled condition already written stays until the next success clears it.
   */
  private retryAfterOutage(key: string): void {
    if (this.queue.isShuttingDown) return;
    this.failures.delete(key);
    this.queue.forget(key);
    // Supersedes the pending backoff or slow-lane retry (the earliest add wins).
    this.queue.addAfter(key, 0);
  }

  /** The slow lane's delay: the interval ±10 %. */
  private slowRetryDelay(): number {
    return this.slowRetryIntervalMs * (0.9 + 0.2 * this.random());
  }

  private async reportStalled(key: string, objectKey: ObjectKey, error: unknown, failures: number): Promise<void> {
    if (!this.options.onStalled) return;
    try {
      await this.options.onStalled(objectKey, error, failures, this.slowRetryIntervalMs);
    } catch (reportError) {
      // The key stays in the slow lane either way; its next attempt reports again.
      this.logger.error({ key, err: reportError }, "could not record the stalled state on the object");
    }
  }

  private finish(result: ReconcileResultLabel, durationMs: number): void {
    this.options.metrics?.reconciled(this.name, result, durationMs / 1000);
  }

  private scheduleResync(): void {
    const period = this.options.resyncPeriodMs ?? 36_000_000;
    const listKeys = this.options.listKeys;
    if (period <= 0 || !listKeys || this.queue.isShuttingDown) return;
    this.resyncTimer = this.clock.setTimeout(() => {
      let count = 0;
      for (const key of listKeys()) {
        try {
          // Nothing changed: the periodic look waits behind every change, as controller-runtime's resync does.
          this.queue.add(formatObjectKey(key), "low");
          count++;
        } catch (error) {
          // A key that would not read back as itself is never queued (see the file's comment); the rest still are.
          this.logger.error({ key, err: error }, "resync skipped a key that cannot be queued");
        }
      }
      this.logger.debug({ keys: count }, "resync");
      this.scheduleResync();
    }, period);
  }
}
