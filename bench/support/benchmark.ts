/**
 * The shape every benchmark shares: a name, the figures it measures, and the few of them worth a column in
 * RESULTS.md. bench/run.ts runs them one after another and records what they return.
 */
import type { KubeClient } from "../../kube/index.ts";

/** One measured figure. */
export interface Metric {
  /** Stable key in results/latest.json, e.g. `allReadyMs`. */
  readonly id: string;
  /** What it is, for the summary table, e.g. "50 instances created → all Ready". */
  readonly label: string;
  readonly value: number;
  /** `ms`, `s`, `MiB`, `count`, `writes`, `writes/instance`, ... */
  readonly unit: string;
  /** When the figure has an expected value (a converged instance costs 0 writes), the value it should have. */
  readonly expected?: number;
}

export interface BenchmarkResult {
  /** The knobs this run used (instance count, concurrency, ...), so figures of different runs compare fairly. */
  readonly parameters: Readonly<Record<string, number | string | boolean>>;
  readonly metrics: readonly Metric[];
  /** Detail that does not fit a single number (writes by kind, ...), kept in latest.json only. */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Everything a benchmark gets from the runner. */
export interface BenchContext {
  /** Admin client of the local cluster (KUBECONFIG). */
  readonly client: KubeClient;
  /** Aborts when the benchmark's time budget is spent or the run is interrupted: stop waiting and clean up. */
  readonly signal: AbortSignal;
  /** A progress line on stderr. */
  log(message: string): void;
}

/** A column of RESULTS.md: a metric (by `id`) or a parameter of this benchmark, under a short `header`. */
export type HeadlineColumn =
  { readonly metric: string; readonly header: string } | { readonly parameter: string; readonly header: string };

export interface Benchmark {
  readonly name: string;
  readonly description: string;
  /** Figures that get a column in RESULTS.md, in order. */
  readonly headline: readonly HeadlineColumn[];
  /** The hard limit of one run; the runner aborts `signal` when it passes. */
  readonly budgetMs: number;
  /** Runs only when named (a long one); `npm run bench` without names leaves it out. */
  readonly explicitOnly?: boolean;
  run(context: BenchContext): Promise<BenchmarkResult>;
}
