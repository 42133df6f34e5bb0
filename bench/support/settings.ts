/** Benchmark knobs from BENCH_* environment variables, so a run can be scaled without editing code. */

/**
 * A positive integer from `process.env[name]` in decimal digits, or `fallback` when unset or empty; anything else is
 * an error naming it. Digits only, as the operator reads its flags: Number() alone would take 0x10, 1e3 and " 3".
 */
export function integerSetting(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= Number.MAX_SAFE_INTEGER)) {
    throw new Error(
      `${name} must be a positive integer (decimal digits, at most ${Number.MAX_SAFE_INTEGER}), got "${raw}"`,
    );
  }
  return value;
}
