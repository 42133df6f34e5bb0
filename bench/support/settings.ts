/** Benchmark knobs from BENCH_* environment variables, so a run can be scaled without editing code. */

/** A positive integer from `process.env[name]`, or `fallback` when unset; anything else is an error naming it. */
export function integerSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}
