/**
 * Reads whose answer must be at least as fresh as the call, shared among callers: a budget's refusal is said on the
 * namespace's instances as the apiserver has them (review.ts), and a burst of refusals, real or sent by anyone on
 * the pod network, must not become one list of the namespace each. Every answer comes from a read begun after the
 * call: callers while no read of the key runs start one; callers while one runs (it may have begun before a write
 * they must see) share the next, begun when it ends. So a key has at most one read running and one waiting,
 * however many call. A failed read is each of its callers' failure, and not kept. With `minGapMs`, a key's reads
 * also begin at least that far apart: a tenant sending refused writes back to back (dry runs cost them nothing)
 * would otherwise keep a list of their namespace's instances, values and all, running under the operator's name
 * for as long as they like; so at most 1000 / minGapMs a second, and a refusal waits at most that much longer.
 * Written by hand: singleflight libraries share a running read, which may predate the call.
 */
import { realClock, type Clock } from "../../kube/clock.ts";

interface KeyReads<T> {
  running?: Promise<T> | undefined;
  /** The running read has not begun yet (it waits out minGapMs): a caller now may share it. */
  waiting?: boolean;
  next?: Promise<T> | undefined;
}

export interface FreshReadsOptions {
  /** The least time between the beginnings of two reads of a key. @default 0 */
  readonly minGapMs?: number;
  readonly clock?: Pick<Clock, "monotonicMs" | "setTimeout">;
}

/** `read(key)`, begun after each call, shared by the calls that can share it. */
export function freshReads<T>(
  read: (key: string) => Promise<T>,
  options: FreshReadsOptions = {},
): (key: string) => Promise<T> {
  const { minGapMs = 0, clock = realClock } = options;
  const byKey = new Map<string, KeyReads<T>>();
  /** When each key's last read began, while that is less than minGapMs ago. */
  const begun = new Map<string, number>();
  const gapOver = (key: string): Promise<void> => {
    const now = clock.monotonicMs();
    for (const [other, at] of begun) if (now - at >= minGapMs) begun.delete(other);
    const last = begun.get(key);
    const wait = last === undefined ? 0 : last + minGapMs - now;
    return wait > 0 ? new Promise((resolve) => clock.setTimeout(resolve, wait)) : Promise.resolve();
  };
  const start = (key: string, reads: KeyReads<T>): Promise<T> => {
    reads.waiting = true;
    const running = (minGapMs > 0 ? gapOver(key) : Promise.resolve()).then(() => {
      reads.waiting = false;
      if (minGapMs > 0) begun.set(key, clock.monotonicMs());
      return read(key);
    });
    reads.running = running;
    const ended = () => {
      if (reads.running === running) reads.running = undefined;
      if (reads.running === undefined && reads.next === undefined) byKey.delete(key);
    };
    running.then(ended, ended);
    return running;
  };
  return (key) => {
    const reads = byKey.get(key) ?? {};
    byKey.set(key, reads);
    if (reads.next) return reads.next;
    if (!reads.running) return start(key, reads);
    if (reads.waiting) return reads.running;
    const next = reads.running.then(
      () => undefined,
      () => undefined,
    );
    reads.next = next.then(() => {
      reads.next = undefined;
      return start(key, reads);
    });
    return reads.next;
  };
}
