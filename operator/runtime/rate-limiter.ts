/**
 * How long a failed key waits before its next attempt: client-go's DefaultControllerRateLimiter, i.e. the larger
 * of a per-key exponential backoff (5 ms doubling to 1000 s) and a token bucket (10 qps, burst 100) that stops a
 * burst of failing keys from hammering the apiserver together, with one change: a bucket per namespace, not one
 * for all keys. A shared bucket reserves a future token for every failure, so one tenant's thousands of failing
 * instances run up a debt that every other tenant's next retry waits out (2,000 keys failing their 15 fast
 * retries: ~47 min of debt, a retry elsewhere delayed 200 s instead of 5 ms).
 */
import type { Clock } from "../../kube/clock.ts";
import { namespaceOfKey } from "../../kube/object-key.ts";

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

/** The settings with their defaults, or an error for a bucket that could never hand out a token. */
function bucketSettings(options: TokenBucketOptions): { qps: number; burst: number } {
  const qps = options.qps ?? 10;
  const burst = options.burst ?? 100;
  if (!(qps > 0) || !(burst >= 1)) {
    throw new Error(`token bucket needs qps > 0 and burst >= 1 (got qps=${qps}, burst=${burst})`);
  }
  return { qps, burst };
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
    ({ qps: this.qps, burst: this.burst } = bucketSettings(options));
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

  /** Takes a token if one is there now (true), else takes nothing (false): for refusing work, not delaying it. */
  tryTake(): boolean {
    const now = this.clock.monotonicMs();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.updatedAt) / 1000) * this.qps);
    this.updatedAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** True when the bucket has refilled to its burst: it holds no debt and no state worth keeping. */
  isFull(): boolean {
    const now = this.clock.monotonicMs();
    return this.tokens + ((now - this.updatedAt) / 1000) * this.qps >= this.burst;
  }
}

export interface GroupedBucketOptions extends TokenBucketOptions {
  /** The group whose bucket a key draws from. @default its namespace */
  readonly groupOf?: (key: string) => string;
}

/**
 * A token bucket per group of keys (their namespace): each group's failures spread out at `qps` after a burst,
 * and no group's waits for another's. A bucket that has refilled is dropped, so memory follows the groups
 * failing now.
 */
export class GroupedBucketRateLimiter implements RateLimiter {
  private readonly clock: Clock;
  private readonly options: TokenBucketOptions;
  private readonly groupOf: (key: string) => string;
  private readonly buckets = new Map<string, BucketRateLimiter>();
  private calls = 0;

  constructor(clock: Clock, options: GroupedBucketOptions = {}) {
    this.clock = clock;
    this.options = bucketSettings(options); // refused now, not at the first failure
    this.groupOf = options.groupOf ?? namespaceOfKey;
  }

  when(key: string): number {
    if (++this.calls % 1024 === 0) this.dropFull();
    const group = this.groupOf(key);
    let bucket = this.buckets.get(group);
    if (!bucket) this.buckets.set(group, (bucket = new BucketRateLimiter(this.clock, this.options)));
    return bucket.when(key);
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }

  /** Groups that have a bucket now (for tests). */
  get groups(): number {
    return this.buckets.size;
  }

  private dropFull(): void {
    for (const [group, bucket] of this.buckets) if (bucket.isFull()) this.buckets.delete(group);
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

export interface ControllerRateLimiterOptions extends ExponentialBackoffOptions, GroupedBucketOptions {}

/** client-go's default, its bucket per namespace: max(per-key 5 ms→1000 s, per-namespace 10 qps / burst 100). */
export function defaultControllerRateLimiter(clock: Clock, options: ControllerRateLimiterOptions = {}): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialRateLimiter(options), new GroupedBucketRateLimiter(clock, options));
}
