/**
 * The operator as a real process for a benchmark: `node operator/main.ts` (or the bundle the image runs) scoped to
 * the benchmark's namespaces,
 * on free ports, its pino JSON lines kept in memory, its memory read from /proc, and stopped by its pid.
 * (test/support/operator.ts does the same for tests, but is tied to node:test and bench/ may not import test/.)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { disableProtoFlag } from "../../chart/proto-guard.ts";
import { GiveUp, waitUntil } from "./wait.ts";

const mainPath = fileURLToPath(new URL("../../operator/main.ts", import.meta.url));

/** One log line of the operator (pino JSON); a line that is not JSON keeps its text in `msg`. */
export interface LogLine {
  readonly msg?: string;
  readonly key?: string;
  readonly [field: string]: unknown;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

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
  /** The process's memory now; undefined once it has exited. */
  memory(): Memory | undefined;
  /** The last `count` log lines, for an error message. */
  tail(count?: number): string;
  /** SIGTERM by pid (the operator drains and exits), SIGKILL after `graceMs`. Safe to call twice. */
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

/** Operators still running; killed if the benchmark process exits without having stopped them. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * Spawns the operator and resolves once it logged "operator starting" (which names its ports). It runs with the
 * admin kubeconfig of KUBECONFIG and without leader election: one process, no Lease traffic.
 */
export async function startOperator(options: StartOptions): Promise<OperatorProcess> {
  if (options.namespaces.length === 0)
    throw new Error("startOperator: pass namespaces, a benchmark must not watch all");
  const args = [
    // As the container runs it (components/node-heap.ts), whatever nodeOptions a benchmark gives.
    disableProtoFlag,
    ...(options.nodeOptions ?? []),
    options.script ?? mainPath,
    `--namespaces=${options.namespaces.join(",")}`,
    "--metrics-bind-address=127.0.0.1:0",
    "--health-probe-bind-address=127.0.0.1:0",
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, { env: process.env, stdio: ["ignore", "pipe", "pipe"] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the operator (${process.execPath} ${args.join(" ")})`);
  running.add(child);
  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) =>
    child.on("close", (code, signal) => {
      running.delete(child);
      exit = { code, signal };
      resolve(exit);
    }),
  );

  const logs: LogLine[] = [];
  // BENCH_OPERATOR_LOGS=DIR keeps every line in DIR/operator-<pid>.log, for a look at reconcile durations after a run.
  const logDir = process.env.BENCH_OPERATOR_LOGS;
  const logFile = logDir ? path.join(logDir, `operator-${pid}.log`) : undefined;
  if (logDir) mkdirSync(logDir, { recursive: true });
  const collect = (text: string) => {
    if (logFile) appendFileSync(logFile, `${text}\n`);
    try {
      logs.push(JSON.parse(text) as LogLine);
    } catch {
      logs.push({ msg: text });
    }
  };
  createInterface({ input: child.stdout! }).on("line", collect);
  createInterface({ input: child.stderr! }).on("line", collect);
  const tail = (count = 15) =>
    logs
      .slice(-count)
      .map((line) => `  ${JSON.stringify(line).slice(0, 400)}`)
      .join("\n");

  // By pid, and only while the child has not been reaped: a reaped pid may already belong to another process.
  const signal = (name: NodeJS.Signals) => {
    if (exit || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(pid, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  };
  const stop = async (graceMs = 20_000): Promise<Exit> => {
    if (exit) return exit;
    signal("SIGTERM");
    const timer = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), graceMs).unref());
    const result = await Promise.race([exited, timer]);
    if (result) return result;
    signal("SIGKILL");
    return exited;
  };

  try {
    const starting = await waitUntil(
      'the operator\'s "operator starting" line',
      () => {
        if (exit) throw new GiveUp(`the operator exited before it started: ${JSON.stringify(exit)}\n${tail()}`);
        return logs.find((line) => line.msg === "operator starting");
      },
      { signal: options.signal, timeoutMs: 30_000, intervalMs: 50 },
    );
    return {
      pid,
      metricsUrl: `http://127.0.0.1:${String(starting.metricsPort)}/metrics`,
      probeUrl: `http://127.0.0.1:${String(starting.probePort)}`,
      logs,
      exited,
      memory: () => (exit ? undefined : readMemory(pid)),
      tail,
      stop,
    };
  } catch (error) {
    await stop(5_000);
    throw error;
  }
}

/** Resolves once /readyz answers 200: every informer has listed. */
export async function waitForReady(operator: OperatorProcess, signal: AbortSignal, timeoutMs = 30_000): Promise<void> {
  await waitUntil(
    "the operator's /readyz",
    async () => ((await fetch(`${operator.probeUrl}/readyz`)).ok ? true : undefined),
    { signal, timeoutMs, intervalMs: 50 },
  );
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
