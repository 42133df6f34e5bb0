/**
 * Reads whose answer must be at least as fresh as the call, shared among callers: a budget's refusal is said on the
 * namespace's instances as the apiserver has them (review.ts), and a burst of refusals, real or sent by anyone on
 * the pod network, must not become one list of the namespace each. Every answer comes from a read begun after the
 * call: callers while no read of the key runs start one; callers while one runs (it may have begun before a write
 * they must see) share the next, begun when it ends. So a key has at most one read running and one waiting,
 * however many call. A failed read is each of its callers' failure, and not kept. Written by hand: singleflight
 * libraries share a running read, which may predate the call.
 */

interface KeyReads<T> {
  running?: Promise<T> | undefined;
  next?: Promise<T> | undefined;
}

/** `read(key)`, begun after each call, shared by the calls that can share it. */
export function freshReads<T>(read: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const byKey = new Map<string, KeyReads<T>>();
  const start = (key: string, reads: KeyReads<T>): Promise<T> => {
    const running = Promise.resolve().then(() => read(key));
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
