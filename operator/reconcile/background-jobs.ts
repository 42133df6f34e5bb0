/**
 * Work that may be slow runs beside the reconcile workers, not in them: a chart from a registry that drips one
 * byte a second, or a render near its CPU limit, would otherwise hold one of the operator's few workers for as long
 * as the platform's limits allow, and two such tenants would hold all of them. A job that settles within a short
 * grace (the common case: a ConfigMap chart, a cached render) is answered at once; a slower one goes on in the
 * background, the reconcile says "not yet" and looks again later (answered at once, no second grace), and the
 * outcome is handed to the first reconcile that asks after it settled. One job per key: asking with another id (the spec changed) starts a new one and the
 * old outcome is dropped. At most `maxRunning` jobs run at once (each may hold a chart's bytes), and beside other
 * namespaces one namespace runs at most half of them, so a flood of instances cannot fetch thousands of charts at
 * once.
 */
import { realClock, type Clock } from "../../kube/clock.ts";
import { fairSlots } from "../chart/index.ts";

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
}

export interface BackgroundJobsOptions {
  /** How long a caller waits for a job before it is left to run in the background. @default 250 */
  readonly graceMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** Jobs running at once; the rest wait their turn. @default 8 */
  readonly maxRunning?: number;
}

export class BackgroundJobs {
  private readonly jobs = new Map<string, Job>();
  private readonly graceMs: number;
  private readonly clock: Clock;
  private readonly slots: <T>(group: string, work: () => Promise<T>) => Promise<T>;

  constructor(options: BackgroundJobsOptions = {}) {
    this.graceMs = options.graceMs ?? 250;
    this.clock = options.clock ?? realClock;
    this.slots = fairSlots(options.maxRunning ?? 8);
  }

  /** The outcome of `work` for `key` as `id`, if it settles within the grace (or settled since); else not yet. */
  async run<T>(key: string, id: string, work: () => Promise<T>): Promise<JobState<T>> {
    const known = this.jobs.get(key);
    // The grace is for a job this call starts (the common case settles in it). A job already running had its
    // grace: waiting again on every look would hold a worker each time (a hostile source's instance, looked at
    // every second, cost a worker 250 ms of every second).
    if (known && known.id === id && !known.state.settled) return { settled: false };
    let job = known;
    if (!job || job.id !== id) {
      const started: Job = { id, state: { settled: false }, done: Promise.resolve() };
      started.done = this.slots(key.split("/")[0] ?? "", work).then(
        (value) => void (started.state = { settled: true, ok: true, value }),
        (error: unknown) => void (started.state = { settled: true, ok: false, error }),
      );
      this.jobs.set(key, started);
      job = started;
      await this.within(job.done);
    }
    const state = job.state as JobState<T>;
    if (state.settled && this.jobs.get(key) === job) this.jobs.delete(key);
    return state;
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
