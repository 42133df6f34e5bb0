/**
 * How long a failed key waits before its next attempt: client-go's DefaultControllerRateLimiter, i.e. the larger
 * of a per-key exponential backoff (5 ms doubling to 1000 s) and an overall token bucket (10 qps, burst 100) that
 * stops a burst of failing keys from hammering the apiserver together.
 */
import type { Clock } from "../../kube/clock.ts";

export interface RateLimiter {
  /** Delay in ms before `key` may be retried; records one more failure of `key`. */
  when(key: string): number;
  /** Resets `key` after a success, so its next failure starts from the base delay again. */
  forget(key: string): void;
  /** Failures recorded for `key` since it was last forgotten. */
  numRequeues(key: string): number;
}

export interface ExponentialBackoffOptions {
  /** @default 5 */
  readonly baseDelayMs?: number;
  /** @default 1_000_000 (1000 s) */
  readonly maxDelayMs?: number;
}

/** Per-key exponential backoff: base, 2·base, 4·base, ... capped at maxDelayMs. */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: ExponentialBackoffOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
  }

  when(key: string): number {
    const exponent = this.failures.get(key) ?? 0;
    this.failures.set(key, exponent + 1);
    // 2 ** 1024 is Infinity, which Math.min caps; no overflow to worry about.
    return Math.min(this.baseDelayMs * 2 ** exponent, this.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

export interface TokenBucketOptions {
  /** Tokens added per second. @default 10 */
  readonly qps?: number;
  /** Bucket size, i.e. how many retries may go at once. @default 100 */
  readonly burst?: number;
}

/**
 * An overall token bucket shared by all keys. Each `when` reserves one token; when the bucket is empty the
 * reservation is for a future token, so the delays of a burst of failures spread out at `qps`.
 */
export class BucketRateLimiter implements RateLimiter {
  private readonly clock: Clock;
  private readonly qps: number;
  private readonly burst: number;
  private tokens: number;
  private updatedAt: number;

  constructor(clock: Clock, options: TokenBucketOptions = {}) {
    this.clock = clock;
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    if (!(this.qps > 0) || !(this.burst >= 1)) {
      throw new Error(`token bucket needs qps > 0 and burst >= 1 (got qps=${this.qps}, burst=${this.burst})`);
    }
    this.tokens = this.burst;
    this.updatedAt = clock.monotonicMs();
  }

  when(_key: string): number {
    const now = this.clock.monotonicMs();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.updatedAt) / 1000) * this.qps);
    this.updatedAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The longest delay of several limiters; every limiter records the failure. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    if (limiters.length === 0) throw new Error("MaxOfRateLimiter needs at least one limiter");
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: string): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(...this.limiters.map((limiter) => limiter.numRequeues(key)));
  }
}

export interface ControllerRateLimiterOptions extends ExponentialBackoffOptions, TokenBucketOptions {}

/** client-go's default: max(per-key 5 ms→1000 s, overall 10 qps / burst 100). */
export function defaultControllerRateLimiter(clock: Clock, options: ControllerRateLimiterOptions = {}): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialRateLimiter(options), new BucketRateLimiter(clock, options));
}
