/**
 * Time as a port, so the waits (deadlines, retry delays) run on a fake clock in unit tests. Same shape as the
 * operator's Clock; the provider may not import operator/.
 */

/** An opaque handle for a scheduled callback. */
export type TimerHandle = object;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once after `delayMs`. */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The process clock. Timers are unref'd: a pending deadline must not keep the provider process alive. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, delayMs) {
    const timer = setTimeout(callback, Math.max(0, delayMs));
    timer.unref();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** Resolves after `delayMs` on `clock`, or early (without rejecting) when `signal` aborts. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clock.clearTimeout(timer);
      resolve();
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** An AbortSignal that aborts at `deadline` (epoch ms) on `clock`; call `dispose` when done with it. */
export function deadlineSignal(clock: Clock, deadline: number): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const timer = clock.setTimeout(() => controller.abort(new Error("deadline")), deadline - clock.now());
  return { signal: controller.signal, dispose: () => clock.clearTimeout(timer) };
}
