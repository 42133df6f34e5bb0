/**
 * Work that may be slow runs beside the reconcile workers, not in them: a chart from a registry that drips one
 * byte a second, or a render near its CPU limit, would otherwise hold one of the operator's few workers for as long
 * as the platform's limits allow, and two such tenants would hold all of them. A job that settles within the grace
 * (by default only work that needs no I/O) is answered at once; a slower one goes on in the background, the
 * reconcile says "not yet" (answered at once on every later look, no second grace), and once the job settles
 * `onSettled` wakes its key, whose next reconcile gets the outcome. The worker is free meanwhile: a grace long
 * enough for a ConfigMap chart (a GET and a render, 100 ms to a second under load) held a worker that long for
 * every chart look, a hostile chart's first look included (the hostile-tenants chaos: 22 first looks of the
 * attackers held the two workers 5.5 s of a 30 s rollout). One job per key: asking with another id (the spec
 * changed) starts a new one and the old outcome is dropped. At most `maxRunning` jobs run at once (each may hold a
 * chart's bytes), and beside other namespaces one namespace runs at most half of them, so a flood of instances cannot
 * fetch thousands of charts at once; jobs that only re-check a Ready instance wait behind the others. A job that is
 * superseded or forgotten before its slot comes never runs, and lets go of its work at once: a tenant editing one
 * instance behind a slow chart queued a job per edit, each holding its spec and each run to the end (300 edits held
 * 488 MiB and ran helm 300 times).
 */
import { realClock, type Clock } from "../../kube/clock.ts";
import { formatObjectKey, type ObjectKey } from "../../kube/object-key.ts";
import { fairSlots, type RenderPriority, type Slots } from "../../chart/index.ts";

/** A job's outcome, or that it is still running. */
export type JobState<T> =
  | { readonly settled: true; readonly ok: true; readonly value: T }
  | { readonly settled: true; readonly ok: false; readonly error: unknown }
  | { readonly settled: false };

interface Job {
  readonly id: string;
  state: JobState<unknown>;
  /** Resolves once `state` is settled. */
  done: Promise<void>;
  /** A caller was told "not yet": wake the key when it settles. */
  awaited: boolean;
  /** The work until a slot starts it; dropped when the job is superseded or forgotten before that. */
  work: (() => Promise<unknown>) | undefined;
}

/** The outcome of a job that was superseded or forgotten before it started; nobody collects it. */
export class DroppedJob extends Error {
  constructor() {
    super("superseded or forgotten before it started");
    this.name = "DroppedJob";
  }
}

export interface BackgroundJobsOptions {
  /**
   * How long a caller waits for a job before it is left to run in the background. The default lets work that
   * needs no I/O (a cached outcome) settle in the same reconcile; anything slower is woken by `onSettled`.
   * @default 0
   */
  readonly graceMs?: number;
  /**
   * Called with the key once a job it was answered "not yet" for has settled (and is still the key's job): the
   * runtime's enqueue, so the outcome is collected at once instead of at the next poll.
   */
  readonly onSettled?: (key: ObjectKey) => void;
  /** @default realClock */
  readonly clock?: Clock;
  /** Jobs running at once; the rest wait their turn. @default 8 */
  readonly maxRunning?: number;
}

export class BackgroundJobs {
  /** By the key's text (formatObjectKey): a Map dedupes only primitives. */
  private readonly jobs = new Map<string, Job>();
  private readonly graceMs: number;
  private readonly clock: Clock;
  private readonly slots: Slots;
  private readonly onSettled: ((key: ObjectKey) => void) | undefined;

  constructor(options: BackgroundJobsOptions = {}) {
    this.graceMs = options.graceMs ?? 0;
    this.clock = options.clock ?? realClock;
    this.slots = fairSlots(options.maxRunning ?? 8);
    this.onSettled = options.onSettled;
  }

  /** True when a settled job wakes its key: callers need no quick poll, only a slow safety net. */
  get wakes(): boolean {
    return this.onSettled !== undefined;
  }

  /**
   * The outcome of `work` for `key` as `id`, if it settles within the grace (or settled since); else not yet. A job
   * at "low" (re-checking an instance already Ready) waits for a slot behind every "normal" one.
   */
  async run<T>(
    key: ObjectKey,
    id: string,
    work: () => Promise<T>,
    priority: RenderPriority = "normal",
  ): Promise<JobState<T>> {
    const text = formatObjectKey(key);
    const known = this.jobs.get(text);
    // The grace is for a job this call starts (the common case settles in it). A job already running had its
    // grace: waiting again on every look would hold a worker each time (a hostile source's instance, looked at
    // every second, cost a worker 250 ms of every second).
    if (known && known.id === id && !known.state.settled) return { settled: false };
    let job = known;
    if (!job || job.id !== id) {
      const started: Job = { id, state: { settled: false }, done: Promise.resolve(), awaited: false, work };
      const settle = (state: JobState<unknown>) => {
        started.state = state;
        // Wake the key only for the job it still waits on: a superseded job's outcome is dropped anyway.
        if (started.awaited && this.jobs.get(text) === started) this.onSettled?.(key);
      };
      started.done = this.slots(key.namespace, () => startWork(started), priority).then(
        (value) => settle({ settled: true, ok: true, value }),
        (error: unknown) => settle({ settled: true, ok: false, error }),
      );
      if (known) known.work = undefined;
      this.jobs.set(text, started);
      job = started;
      await this.within(job.done);
    }
    const state = job.state as JobState<T>;
    // Dropped in the caller's own grace (superseded meanwhile): the caller's key has a newer job to wait for.
    if (state.settled && !state.ok && state.error instanceof DroppedJob) return { settled: false };
    if (!state.settled) job.awaited = true;
    else if (this.jobs.get(text) === job) this.jobs.delete(text);
    return state;
  }

  /**
   * Drops `key`'s job: its outcome is never collected and its key never woken for it; one still waiting for a slot
   * never runs (a running one holds its slot until it ends; the platform's limits bound that). For an instance that
   * is gone or no longer needs it.
   */
  forget(key: ObjectKey): void {
    const text = formatObjectKey(key);
    const job = this.jobs.get(text);
    if (job) job.work = undefined;
    this.jobs.delete(text);
  }

  /** Jobs still running or not yet collected. */
  get size(): number {
    return this.jobs.size;
  }

  private within(done: Promise<void>): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(resolve, this.graceMs);
      void done.then(() => {
        this.clock.clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** Runs a job's work once its slot comes, unless it was dropped meanwhile (then the slot is given back at once). */
function startWork(job: Job): Promise<unknown> {
  const { work } = job;
  job.work = undefined;
  return work ? work() : Promise.reject(new DroppedJob());
}
