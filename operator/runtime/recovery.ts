/**
 * Recovery in seconds after an apiserver (or etcd) outage. During an outage every key that tries fails, and its
 * backoff grows: a 3-minute brown-out pushes a key past maxConsecutiveFailures into the slow lane (5 minutes), an
 * etcd restart leaves keys 20-80 s from their next try; the cluster is back long before. client-go and
 * controller-runtime wait it out too. Here the controller learns that the apiserver is back and retries at once
 * the keys whose last failure was the outage, paced so the apiserver that just came back is not stampeded.
 *
 * - Which keys: those whose last failure was the apiserver unreachable, erroring or throttling
 *   ({@link isOutageFailure}: a transport error, 5xx or 429 anywhere in the cause chain). A key that failed for
 *   its own reasons (a PermanentError, a chart source down, a conflict) or has succeeded since keeps its backoff.
 * - When: a cheap readiness probe (the apiserver's `/readyz`, which checks etcd too) runs every `probeIntervalMs`,
 *   only while such keys exist. A release needs the probe to have seen the apiserver not ready and then ready
 *   again: keys failing with 5xx on an apiserver that stays ready (a broken webhook answers 500) keep their
 *   backoff, so this never turns a failing key into a hot loop.
 * - How fast: the first `burst` keys at once, then `perSecond` a second (a token bucket), in the order they failed;
 *   the work queue's concurrency bounds the reconciles in flight on top.
 * - A flapping apiserver: a release that is followed by an outage failure of a released key before any key
 *   succeeded came too early; the next one waits a hold-off that doubles each time (up to `maxHoldOffMs`) and
 *   resets on the first success.
 */
import type { Logger } from "pino";
import { ServerError, TooManyRequestsError, TransportError } from "../../kube/index.ts";
import { realClock, type Clock, type TimerHandle } from "../../kube/clock.ts";

/**
 * True when `error`, or an error in its `cause` chain, is the apiserver unreachable (no answer, a broken
 * connection, a timeout), erroring (5xx) or throttling (429): what an outage looks like from a client.
 */
export function isOutageFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; depth++) {
    if (
      current instanceof TransportError ||
      current instanceof ServerError ||
      current instanceof TooManyRequestsError
    ) {
      return true;
    }
    current = current.cause;
  }
  return false;
}

export interface OutageRecoveryOptions {
  /** Resolves true when the apiserver is ready (`GET /readyz` answered 2xx); false or a rejection: not ready. */
  readonly probe: () => Promise<boolean>;
  /** Retries `key` now: the controller resets its backoff and queues it. */
  readonly release: (key: string) => void;
  /** @default realClock */
  readonly clock?: Clock;
  /** How often the probe runs while keys wait on an outage. @default 2_000 */
  readonly probeIntervalMs?: number;
  /** A probe without an answer for this long counts as not ready. @default 5_000 */
  readonly probeTimeoutMs?: number;
  /** Keys released at once when the apiserver is back. @default 4 */
  readonly burst?: number;
  /** Keys released per second after the burst. @default 10 */
  readonly perSecond?: number;
  /** The longest hold-off after releases that came too early. @default 60_000 */
  readonly maxHoldOffMs?: number;
  readonly logger?: Logger;
}

export class OutageRecovery {
  private readonly options: OutageRecoveryOptions;
  private readonly clock: Clock;
  private readonly probeIntervalMs: number;
  private readonly probeTimeoutMs: number;
  private readonly burst: number;
  private readonly perSecond: number;
  private readonly maxHoldOffMs: number;
  /** Keys whose last failure was an outage, in the order they (first) failed. */
  private readonly waiting = new Set<string>();
  /** Keys of the release under way, not yet handed to `release`. */
  private readonly releasing = new Set<string>();
  /** Keys of the last release, until it is judged (a success: it was right; an outage failure: too early). */
  private judged = new Set<string>();
  /** The probe saw the apiserver not ready since the last release. */
  private downSeen = false;
  private probeTimer: TimerHandle | undefined;
  private probeInFlight = false;
  private paceTimer: TimerHandle | undefined;
  private holdOffMs = 0;
  private notBefore = -Infinity;
  private stopped = false;
  /** Releases so far (for tests and logs). */
  releases = 0;

  constructor(options: OutageRecoveryOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.probeIntervalMs = options.probeIntervalMs ?? 2_000;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 5_000;
    this.burst = options.burst ?? 4;
    this.perSecond = options.perSecond ?? 10;
    this.maxHoldOffMs = options.maxHoldOffMs ?? 60_000;
    for (const [name, value] of Object.entries({
      probeIntervalMs: this.probeIntervalMs,
      probeTimeoutMs: this.probeTimeoutMs,
      perSecond: this.perSecond,
      maxHoldOffMs: this.maxHoldOffMs,
    })) {
      if (!(value > 0)) throw new Error(`outage recovery: ${name} must be > 0 (got ${value})`);
    }
    if (!Number.isInteger(this.burst) || this.burst < 1) {
      throw new Error(`outage recovery: burst must be an integer >= 1 (got ${this.burst})`);
    }
  }

  /** Keys waiting for the apiserver to come back. */
  get waitingKeys(): readonly string[] {
    return [...this.waiting];
  }

  /** A reconcile of `key` failed with `error` (not a PermanentError): remembered if it was the outage's doing. */
  failed(key: string, error: unknown): void {
    if (this.stopped) return;
    if (!isOutageFailure(error)) return this.forget(key);
    if (this.judged.has(key)) {
      // Released, and the apiserver failed it again before anything succeeded: the release came too early.
      this.judged = new Set();
      this.holdOffMs = Math.min(Math.max(this.holdOffMs * 2, this.probeIntervalMs), this.maxHoldOffMs);
      this.notBefore = this.clock.monotonicMs() + this.holdOffMs;
      this.options.logger?.info({ holdOffMs: this.holdOffMs }, "apiserver failed again after a recovery; holding off");
    }
    this.releasing.delete(key);
    this.waiting.add(key);
    this.scheduleProbe();
  }

  /** A reconcile of `key` succeeded: the apiserver answers, and the key waits on nothing. */
  succeeded(key: string): void {
    if (this.judged.size > 0 || this.holdOffMs > 0) {
      this.judged = new Set();
      this.holdOffMs = 0;
      this.notBefore = -Infinity;
    }
    this.forget(key);
  }

  /** `key` no longer waits on an outage (it failed for its own reasons, permanently, or was deleted). */
  forget(key: string): void {
    this.waiting.delete(key);
    this.releasing.delete(key);
    if (this.waiting.size === 0) this.stopProbing();
  }

  /** Stops the probe and the release under way (on shutdown). */
  stop(): void {
    this.stopped = true;
    this.stopProbing();
    if (this.paceTimer) this.clock.clearTimeout(this.paceTimer);
    this.paceTimer = undefined;
    this.releasing.clear();
  }

  private scheduleProbe(): void {
    if (this.probeTimer || this.stopped) return;
    this.probeTimer = this.clock.setTimeout(() => {
      this.probeTimer = undefined;
      void this.runProbe();
    }, this.probeIntervalMs);
  }

  private stopProbing(): void {
    if (this.probeTimer) this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    this.downSeen = false;
  }

  private async runProbe(): Promise<void> {
    // One probe at a time: an apiserver that hangs gets no pile of them.
    if (this.probeInFlight || this.stopped || this.waiting.size === 0) return;
    this.probeInFlight = true;
    let ready: boolean;
    try {
      ready = await this.probeOnce();
    } finally {
      this.probeInFlight = false;
    }
    if (this.stopped || this.waiting.size === 0) return;
    if (!ready) this.downSeen = true;
    else if (this.downSeen && this.clock.monotonicMs() >= this.notBefore) this.release();
    if (this.waiting.size > 0) this.scheduleProbe();
  }

  private probeOnce(): Promise<boolean> {
    let timer: TimerHandle | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = this.clock.setTimeout(() => resolve(false), this.probeTimeoutMs);
    });
    const answer = Promise.resolve()
      .then(() => this.options.probe())
      .then(
        (ready) => ready === true,
        () => false,
      );
    return Promise.race([answer, timeout]).finally(() => this.clock.clearTimeout(timer!));
  }

  private release(): void {
    const keys = [...this.waiting];
    this.waiting.clear();
    this.downSeen = false;
    this.releases++;
    this.judged = new Set(keys);
    for (const key of keys) this.releasing.add(key);
    this.options.logger?.info(
      { keys: keys.length, burst: this.burst, perSecond: this.perSecond },
      "apiserver is back: retrying the keys that failed during the outage",
    );
    for (let i = 0; i < this.burst && this.releasing.size > 0; i++) this.releaseNext();
    this.pace();
  }

  private pace(): void {
    if (this.paceTimer || this.releasing.size === 0 || this.stopped) return;
    this.paceTimer = this.clock.setTimeout(() => {
      this.paceTimer = undefined;
      this.releaseNext();
      this.pace();
    }, 1000 / this.perSecond);
  }

  private releaseNext(): void {
    const key = this.releasing.values().next().value;
    if (key === undefined) return;
    this.releasing.delete(key);
    this.options.release(key);
  }
}
