/**
 * Reads admission makes again and again (the same Namespace for every instance a tenant applies, the same
 * StorageClass) kept for a few seconds, so a burst of applies costs the apiserver one GET per object instead of one
 * per review. A change to a namespace's labels (budgets, Pod Security) applies after at most `ttlMs`. Concurrent
 * reads of one key share one request; a failed read is not kept, nor an answer `keep` turns down once it has come
 * (one that refuses, say, which the tenant may be fixing right now). Written by hand: a Map with an expiry is all it
 * takes, and the chart engine's LRU (chart/lru-cache.ts) bounds bytes, not age.
 */
import type { Clock } from "../../kube/clock.ts";
import { realClock } from "../../kube/clock.ts";

export interface RecentReadsOptions {
  /** How long an answer is reused. @default 5_000 */
  readonly ttlMs?: number;
  /** Kept answers at most; the oldest go first. @default 1_000 */
  readonly maxEntries?: number;
  readonly clock?: Pick<Clock, "monotonicMs">;
}

/** {@link RecentReadsOptions} for one kind of answer. */
export interface RecentReadsOf<T> extends RecentReadsOptions {
  /** Whether an answer may be reused once it has come (concurrent reads share it regardless). @default always */
  readonly keep?: (answer: T) => boolean;
}

/** `read(key)`, with answers reused for `ttlMs`. */
export function recentReads<T>(
  read: (key: string) => Promise<T>,
  options: RecentReadsOf<T> = {},
): (key: string) => Promise<T> {
  const ttlMs = options.ttlMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 1_000;
  const clock = options.clock ?? realClock;
  const kept = new Map<string, { readonly at: number; readonly answer: Promise<T> }>();
  return (key) => {
    const now = clock.monotonicMs();
    const entry = kept.get(key);
    if (entry && now - entry.at < ttlMs) return entry.answer;
    kept.delete(key);
    const answer = read(key);
    kept.set(key, { at: now, answer });
    // Maps iterate in insertion order: the first key is the oldest.
    if (kept.size > maxEntries) kept.delete(kept.keys().next().value!);
    const drop = () => {
      if (kept.get(key)?.answer === answer) kept.delete(key);
    };
    answer.then((value) => {
      if (options.keep && !options.keep(value)) drop();
    }, drop);
    return answer;
  };
}
