/**
 * Time as an interface. The runtime's timing (backoff, token bucket, delayed adds, lease expiry, informer staleness)
 * and the provider's deadlines read time through a Clock, so unit tests can drive them with a fake one; a few
 * measurements that no test drives (the webhook's connection ages, a render's duration, a chart download's deadline)
 * read the monotonic clock directly. It lives in kube/, the ground floor both the operator and the provider may import.
 *
 * Durations come from a monotonic clock: an NTP step or a manual `date -s` moves the wall clock, and a lease or a
 * deadline measured with it would expire early or never. The wall clock is read only for timestamps: written to
 * objects (a Lease's renewTime, a condition's lastTransitionTime), which other processes read as such, or compared
 * with ones other processes wrote (a deletionTimestamp, a certificate's or an exec token's expiry).
 */
import { performance } from "node:perf_hooks";

/**
 * The longest delay Node's timers keep, in seconds (24.8 days): setTimeout takes a 32-bit signed count of
 * milliseconds and fires a longer delay after 1 ms, which would turn a period into a hot loop.
 */
export const maxTimerSeconds = Math.floor(0x7fffffff / 1000);

/** An opaque handle for a scheduled callback. */
export type TimerHandle = object;

export interface Clock {
  /**
   * Monotonic milliseconds from an arbitrary origin: only differences mean something. For durations, deadlines
   * and timers; it never jumps when the wall clock is set.
   */
  monotonicMs(): number;
  /** Wall-clock milliseconds since the epoch: only for timestamps (see above), never for durations. */
  wallTimeMs(): number;
  /** Calls `callback` once after `delayMs`. */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The process clock. Timers are unref'd: a pending retry must never keep a shutting-down process alive. */
export const realClock: Clock = {
  // performance.now() is CLOCK_MONOTONIC on Linux (libuv's hrtime), unaffected by settimeofday and NTP steps.
  monotonicMs: () => performance.now(),
  wallTimeMs: () => Date.now(),
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

/**
 * An AbortSignal that aborts at `deadline` (a `clock.monotonicMs()` value) on `clock`; call `dispose` when done
 * with it.
 */
export function deadlineSignal(clock: Clock, deadline: number): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const timer = clock.setTimeout(() => controller.abort(new Error("deadline")), deadline - clock.monotonicMs());
  return { signal: controller.signal, dispose: () => clock.clearTimeout(timer) };
}
