/** Waiting on conditions within a benchmark's budget: every wait ends when its own timeout or the budget runs out. */
import { setTimeout as sleep } from "node:timers/promises";

export interface WaitOptions {
  /** The benchmark's budget (BenchContext.signal). */
  readonly signal: AbortSignal;
  /** @default 60_000 */
  readonly timeoutMs?: number;
  /** @default 250 */
  readonly intervalMs?: number;
}

/** Thrown by a probe when waiting longer cannot help (the process it waits for has exited): ends the wait at once. */
export class GiveUp extends Error {}

/**
 * Polls `probe` until it returns a value other than undefined; throws naming `what` on timeout or abort. A probe
 * that throws is retried (the thing may not be up yet), unless it throws GiveUp.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  { signal, timeoutMs = 60_000, intervalMs = 250 }: WaitOptions,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (signal.aborted) throw new Error(`gave up waiting for ${what}: the benchmark's time budget is spent`);
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      if (error instanceof GiveUp) throw error;
      lastError = error;
    }
    if (performance.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${cause}`);
    }
    await sleep(intervalMs, undefined, { signal }).catch(() => undefined);
  }
}

/** Sleeps `ms`, ending early (without throwing) when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, undefined, { signal }).catch(() => undefined);
}

/** Resolves or rejects with `promise`, or rejects naming `what` when `timeoutMs` or the budget (`signal`) runs out. */
export function within<T>(
  what: string,
  promise: Promise<T>,
  { signal, timeoutMs = 60_000 }: Omit<WaitOptions, "intervalMs">,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const budgetSpent = () => new Error(`gave up waiting for ${what}: the benchmark's time budget is spent`);
    if (signal.aborted) return reject(budgetSpent());
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      settle();
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`))),
      timeoutMs,
    );
    const onAbort = () => finish(() => reject(budgetSpent()));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
