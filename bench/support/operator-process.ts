/**
 * The operator as a real process for a benchmark: `node operator/main.ts` (or the bundle the image runs, with the
 * container's heap flags) scoped to the benchmark's namespaces, started by the launcher the tests and `npm start`
 * share (tools/lib/operator-launcher.ts): free ports, its pino JSON lines kept in memory, stopped by its pid. This
 * file adds what only benchmarks need: the admin kubeconfig without leader election, the time budget, a copy of the
 * lines on disk, and its memory read from /proc.
 */
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { launchOperator, waitForProbe, type Exit, type LogLine } from "../../tools/lib/operator-launcher.ts";

export type { Exit, LogLine };

/** Resident memory of a process, from /proc/<pid>/status, in bytes. */
export interface Memory {
  /** VmRSS: resident now. */
  readonly rss: number;
  /** VmHWM: the highest resident size the process ever had (its peak RSS). */
  readonly peakRss: number;
}

export interface OperatorProcess {
  readonly pid: number;
  readonly metricsUrl: string;
  readonly probeUrl: string;
  /** Every line so far, in arrival order. */
  readonly logs: readonly LogLine[];
  readonly exited: Promise<Exit>;
  /** The exit, once it came. */
  exitStatus(): Exit | undefined;
  /** The process's memory now; undefined once it has exited. */
  memory(): Memory | undefined;
  /** The exit (if any) and the last `count` log lines, for an error message. */
  tail(count?: number): string;
  /** SIGTERM by pid (the operator drains and exits), SIGKILL after `graceMs` (20 s). Safe to call twice. */
  stop(graceMs?: number): Promise<Exit>;
}

export interface StartOptions {
  /** --namespaces: a benchmark's operator never watches other people's namespaces. */
  readonly namespaces: readonly string[];
  /** More flags, e.g. `--concurrency=4`, `--resync-period=5`. */
  readonly args?: readonly string[];
  /** The script Node runs: operator/main.ts unless given (e.g. the bundle of tools/lib/operator-bundle.ts). */
  readonly script?: string;
  /** Node's own flags, e.g. the container's `--max-old-space-size`. */
  readonly nodeOptions?: readonly string[];
  readonly signal: AbortSignal;
}

/**
 * Spawns the operator and resolves once it logged "operator starting" (which names its ports). It runs with the
 * admin kubeconfig of KUBECONFIG and without leader election: one process, no Lease traffic.
 */
export async function startOperator(options: StartOptions): Promise<OperatorProcess> {
  if (options.namespaces.length === 0)
    throw new Error("startOperator: pass namespaces, a benchmark must not watch all");
  // BENCH_OPERATOR_LOGS=DIR keeps every line in DIR/operator-<pid>.log, for a look at reconcile durations after a run.
  const logDir = process.env.BENCH_OPERATOR_LOGS;
  if (logDir) mkdirSync(logDir, { recursive: true });
  const operator = launchOperator({
    script: options.script,
    nodeOptions: options.nodeOptions,
    namespaces: options.namespaces,
    args: options.args,
    onLine: logDir ? (text, pid) => appendFileSync(path.join(logDir, `operator-${pid}.log`), `${text}\n`) : undefined,
  });
  const { pid } = operator;
  try {
    const started = await operator.started({ signal: options.signal, timeoutMs: 30_000 });
    return {
      pid,
      metricsUrl: started.metricsUrl,
      probeUrl: started.probeUrl,
      logs: operator.logs,
      exited: operator.exited,
      exitStatus: operator.exitStatus,
      memory: () => (operator.exitStatus() ? undefined : readMemory(pid)),
      tail: operator.tail,
      stop: (graceMs = 20_000) => operator.stop(graceMs),
    };
  } catch (error) {
    await operator.stop(5_000);
    throw error;
  }
}

/** Resolves once /readyz answers 200: every informer has listed. */
export async function waitForReady(operator: OperatorProcess, signal: AbortSignal, timeoutMs = 30_000): Promise<void> {
  await waitForProbe(operator, operator.probeUrl, "/readyz", { signal, timeoutMs, intervalMs: 50 });
}

/** VmRSS and VmHWM of `pid` in bytes; undefined if the process is gone. */
export function readMemory(pid: number): Memory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib("VmRSS"), peakRss: kib("VmHWM") };
}
