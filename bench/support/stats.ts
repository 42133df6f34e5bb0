/** Summary statistics of raw samples (latencies and durations measured by the benchmarks themselves). */

/**
 * The `q`-quantile (0..1) of `samples`, linearly interpolated between the closest ranks (numpy's default), so
 * p50 of [1, 2] is 1.5. NaN for no samples.
 */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (sorted.length - 1) * q;
  const below = Math.floor(rank);
  const above = Math.ceil(rank);
  const low = sorted[below]!;
  const high = sorted[above]!;
  return low + (high - low) * (rank - below);
}

export function max(samples: readonly number[]): number {
  return samples.length === 0 ? NaN : Math.max(...samples);
}

/** Rounds to `digits` decimals, for figures that are recorded (sub-millisecond noise is not information). */
export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
