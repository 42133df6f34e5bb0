/**
 * At most `maxInFlight` admission reads at once, the waiting ones served by turns across namespaces. Anyone on the
 * pod network can send reviews, each making a GET (a chart ConfigMap is up to ~1.3 MB to hold and parse): without a
 * ceiling 1,000 concurrent reviews held 1,000 answers at once (RSS 109 → 733 MiB). By turns, not first come: one
 * namespace's reviews by the hundred wait behind each other, not in front of another namespace's one. Beyond
 * `maxWaiting` a read is refused at once rather than queued past any review's deadline. Written by hand: a counter
 * and a queue per key.
 */

export interface FairLimiterOptions {
  /** Reads running at once. @default 16 */
  readonly maxInFlight?: number;
  /** Reads waiting at once, over all keys; more are refused. @default 1_000 */
  readonly maxWaiting?: number;
}

/** Runs `read` when a slot is free and it is `key`'s turn; rejects at once when too many wait. */
export type FairLimiter = <T>(key: string, read: () => Promise<T>) => Promise<T>;

export function fairLimiter(options: FairLimiterOptions = {}): FairLimiter {
  const maxInFlight = options.maxInFlight ?? 16;
  const maxWaiting = options.maxWaiting ?? 1_000;
  let running = 0;
  let waiting = 0;
  // Keys with reads waiting, in turn order (a Map iterates in insertion order: the front key goes next).
  const queues = new Map<string, (() => void)[]>();

  const next = () => {
    while (running < maxInFlight) {
      const first = queues.entries().next();
      if (first.done) return;
      const [key, queue] = first.value;
      const start = queue.shift()!;
      queues.delete(key);
      // The key goes to the back of the turns if it has more waiting.
      if (queue.length > 0) queues.set(key, queue);
      waiting--;
      start();
    }
  };

  return <T>(key: string, read: () => Promise<T>): Promise<T> => {
    if (running < maxInFlight && queues.size === 0) return run(read);
    if (waiting >= maxWaiting) {
      return Promise.reject(new Error(`more than ${maxWaiting} admission reads are waiting; try again`));
    }
    waiting++;
    return new Promise<T>((resolve, reject) => {
      const queue = queues.get(key) ?? [];
      queue.push(() => run(read).then(resolve, reject));
      queues.set(key, queue);
    });
  };

  function run<T>(read: () => Promise<T>): Promise<T> {
    running++;
    let answer: Promise<T>;
    try {
      answer = read();
    } catch (error) {
      answer = Promise.reject(error as Error);
    }
    return answer.finally(() => {
      running--;
      next();
    });
  }
}
