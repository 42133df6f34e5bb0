/** Progress lines for long tool steps: `[cluster 12.3s] message`, on stderr so stdout stays parseable. */
export function progress(scope: string): (message: string) => void {
  const started = performance.now();
  return (message) => {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stderr.write(`[${scope} ${seconds}s] ${message}\n`);
  };
}

/** Polls `probe` until it returns a value (not undefined), or throws `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 120_000, intervalMs = 250 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : "";
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
