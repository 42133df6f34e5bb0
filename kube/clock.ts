/**
 * Time as a port. Everything that waits or measures (the operator runtime's backoff, token bucket, delayed adds,
 * lease expiry, informer staleness; the provider's deadlines) reads time through a Clock, so unit tests can drive
 * it with a fake one. It lives in kube/, the ground floor both the operator and the provider may import.
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

/** The process clock. Timers are unref'd: a pending retry must never keep a shutting-down process alive. */
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
