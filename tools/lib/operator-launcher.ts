/**
 * The one way this repository starts the operator as a process: `node --disable-proto=throw [node flags] SCRIPT
 * --namespaces=... --metrics-bind-address=... --health-probe-bind-address=... [flags]`, its pino JSON lines
 * collected (or appended to a log file when it must outlive us), its start awaited ("operator starting" or a probe
 * answering), and stopped by its pid, SIGTERM then SIGKILL.
 *
 * Three callers add their own part on top:
 * - `npm start` (tools/lib/operator-process.ts): tools/operator.ts detached, with a ServiceAccount token it mints
 *   and renews, on ports it records, logging to .local/operator.log;
 * - the tests (test/support/operator.ts): operator/main.ts with leader election and every chart kind, tied to a
 *   test's lifetime;
 * - the benchmarks (bench/support/operator-process.ts): the bundle the image runs with the container's heap flags,
 *   its memory read from /proc.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { disableProtoFlag } from "../../chart/proto-guard.ts";
import { allocatorEnv } from "../../components/node-heap.ts";

/** operator/main.ts: the script the tests and benchmarks run unless they name another. */
export const operatorMain = fileURLToPath(new URL("../../operator/main.ts", import.meta.url));

/** One log line of the operator (pino JSON); a line that is not a JSON object has only `msg` and `stream`. */
export interface LogLine {
  readonly msg?: string;
  readonly level?: number;
  readonly key?: string;
  readonly [field: string]: unknown;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface LaunchOptions {
  /** The script Node runs (operator/main.ts, tools/operator.ts, the bundle). @default operatorMain */
  readonly script?: string;
  /** Node's own flags, after --disable-proto=throw (which is always first), e.g. the container's heap flags. */
  readonly nodeOptions?: readonly string[];
  /** --namespaces; empty or absent watches every namespace. */
  readonly namespaces?: readonly string[];
  /**
   * Port of /metrics on 127.0.0.1; 0 lets the operator pick a free one and name it in its "operator starting"
   * line (read it with {@link LaunchedOperator.started}).
   * @default 0
   */
  readonly metricsPort?: number;
  /** Port of /healthz and /readyz on 127.0.0.1, as `metricsPort`. @default 0 */
  readonly probePort?: number;
  /** More operator flags, after the launcher's own. */
  readonly args?: readonly string[];
  /** @default process.env (with the container's allocator setting, components/node-heap.ts, where it has none) */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** A name in error messages. @default "operator" */
  readonly label?: string;
  /**
   * Append stdout and stderr to this file and detach: the operator outlives this process (`npm start`), and its
   * lines are not collected ({@link LaunchedOperator.tail} reads the file). Without it, lines are collected in
   * memory and the operator is killed if this process exits first.
   */
  readonly logFile?: string;
  /** Called with every raw line as it arrives (only without `logFile`), e.g. to echo or keep it. */
  readonly onLine?: (text: string, pid: number) => void;
}

/** What the "operator starting" line says. */
export interface Started {
  readonly line: LogLine;
  /** The process's identity (its Lease holder name). */
  readonly identity: string;
  /** `http://127.0.0.1:PORT/metrics`, or `https://` when /metrics is secure (its certificate self-signed unless mounted) */
  readonly metricsUrl: string;
  /** `http://127.0.0.1:PORT` of /healthz and /readyz */
  readonly probeUrl: string;
}

export interface WaitOptions {
  /** @default 60_000 */
  readonly timeoutMs?: number;
  /** Ends the wait early (e.g. a benchmark's budget). */
  readonly signal?: AbortSignal;
}

export interface LaunchedOperator {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly label: string;
  /** Every line so far, stdout and stderr, in arrival order (empty with `logFile`). */
  readonly logs: readonly LogLine[];
  /** Resolves with the process's exit, whenever it comes. */
  readonly exited: Promise<Exit>;
  /** The exit, once it came. */
  exitStatus(): Exit | undefined;
  /** The first line (already logged or still to come) that satisfies `predicate`; rejects on timeout or abort. */
  waitForLog(predicate: (line: LogLine) => boolean, options?: WaitOptions & { what?: string }): Promise<LogLine>;
  /** Waits for the "operator starting" line; rejects at once if the process exits first. */
  started(options?: WaitOptions): Promise<Started>;
  /** SIGTERM (the operator drains and exits), SIGKILL after `graceMs`. Safe to call twice. @default 30_000 */
  stop(graceMs?: number): Promise<Exit>;
  /** SIGKILL: no chance to release the lease or finish anything. */
  kill(): Promise<Exit>;
  /** The exit (if any) and the last `count` log lines, for an error message that explains a failure. */
  tail(count?: number): string;
}

/** A port free right now on 127.0.0.1 (the kernel picks it), for a caller that must know it before the start. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Node's arguments for an operator process (pure). */
export function operatorCommand(options: LaunchOptions): string[] {
  const namespaces = options.namespaces ?? [];
  return [
    // As the container runs it (components/node-heap.ts): no tenant key reaches a prototype through __proto__,
    // whatever Node flags a caller adds.
    disableProtoFlag,
    ...(options.nodeOptions ?? []),
    options.script ?? operatorMain,
    ...(namespaces.length > 0 ? [`--namespaces=${namespaces.join(",")}`] : []),
    `--metrics-bind-address=127.0.0.1:${options.metricsPort ?? 0}`,
    `--health-probe-bind-address=127.0.0.1:${options.probePort ?? 0}`,
    ...(options.args ?? []),
  ];
}

/** Attached operators still running: killed if this process exits without having stopped them (a crash, a timeout). */
const attached = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of attached) child.kill("SIGKILL");
});

/** Spawns the operator (see {@link LaunchOptions}); returns at once, with the process running. */
export function launchOperator(options: LaunchOptions = {}): LaunchedOperator {
  const args = operatorCommand(options);
  const label = options.label ?? "operator";
  const logFd = options.logFile === undefined ? undefined : openSync(options.logFile, "a");
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    // The container's allocator setting too, unless the caller's environment names its own.
    env: { ...allocatorEnv, ...(options.env ?? process.env) },
    detached: logFd !== undefined,
    stdio: logFd === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", logFd, logFd],
  });
  if (logFd !== undefined) {
    closeSync(logFd); // the child has its own copy
    child.unref();
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the ${label} (${process.execPath} ${args.join(" ")})`);
  if (logFd === undefined) attached.add(child);

  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) =>
    child.on("close", (code, signal) => {
      attached.delete(child);
      exit = { code, signal };
      resolve(exit);
    }),
  );

  const logs: LogLine[] = [];
  const waiters = new Set<{ predicate: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  const collect = (stream: "stdout" | "stderr") => (text: string) => {
    const line = parseLine(text, stream);
    logs.push(line);
    options.onLine?.(text, pid);
    for (const waiter of waiters) {
      if (waiter.predicate(line)) {
        waiters.delete(waiter);
        waiter.resolve(line);
      }
    }
  };
  if (child.stdout) createInterface({ input: child.stdout }).on("line", collect("stdout"));
  if (child.stderr) createInterface({ input: child.stderr }).on("line", collect("stderr"));

  const tail = (count = 15) => {
    const last =
      options.logFile === undefined
        ? logs.slice(-count).map((line) => `  ${JSON.stringify(line).slice(0, 400)}`)
        : logFileTail(options.logFile, count).map((line) => `  ${line.slice(0, 400)}`);
    return `${exit ? `\nexited: ${JSON.stringify(exit)}` : ""}\nlast log lines:\n${last.join("\n")}`;
  };

  const waitForLog: LaunchedOperator["waitForLog"] = (predicate, { timeoutMs = 60_000, what, signal } = {}) => {
    const found = logs.find(predicate);
    if (found) return Promise.resolve(found);
    const description = what ?? "a log line";
    return new Promise<LogLine>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        waiters.delete(waiter);
      };
      const waiter = { predicate, resolve: (line: LogLine) => (finish(), resolve(line)) };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${label} (pid ${pid}): no ${description} within ${timeoutMs / 1000}s${tail()}`));
      }, timeoutMs);
      const onAbort = () => {
        finish();
        reject(new Error(`${label} (pid ${pid}): gave up waiting for ${description}: ${abortReason(signal)}`));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      waiters.add(waiter);
    });
  };

  const started: LaunchedOperator["started"] = async ({ timeoutMs, signal } = {}) => {
    const gone = new AbortController(); // ends the wait (and its timer) when the process exits first
    const line = waitForLog((candidate) => candidate.msg === "operator starting", {
      timeoutMs,
      signal: signal ? AbortSignal.any([signal, gone.signal]) : gone.signal,
      what: '"operator starting" line',
    });
    // undefined when it exited first; an exit after the start is the caller's business, not an error here.
    const starting = await Promise.race([line, exited.then(() => undefined)]);
    if (!starting) {
      line.catch(() => undefined);
      gone.abort();
      throw new Error(`${label} exited before it started: ${JSON.stringify(exit)}${tail()}`);
    }
    return {
      line: starting,
      identity: String(starting.identity),
      metricsUrl: `${starting.metricsScheme === "https" ? "https" : "http"}://127.0.0.1:${String(starting.metricsPort)}/metrics`,
      probeUrl: `http://127.0.0.1:${String(starting.probePort)}`,
    };
  };

  // By pid, and only while the child has not been reaped: a reaped pid may already belong to another process.
  const signalByPid = (name: NodeJS.Signals) => {
    if (exit || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(pid, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  };
  const signalAndWait = async (name: NodeJS.Signals, graceMs: number): Promise<Exit> => {
    if (exit) return exit;
    signalByPid(name);
    const timer = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), graceMs).unref());
    const result = await Promise.race([exited, timer]);
    if (result) return result;
    signalByPid("SIGKILL");
    return exited;
  };

  return {
    child,
    pid,
    label,
    logs,
    exited,
    exitStatus: () => exit,
    waitForLog,
    started,
    stop: (graceMs = 30_000) => signalAndWait("SIGTERM", graceMs),
    kill: () => signalAndWait("SIGKILL", 30_000),
    tail,
  };
}

/** What {@link waitForProbe} needs of a launched operator (a caller's own handle may carry just these). */
export type ProbeTarget = Pick<LaunchedOperator, "pid" | "exitStatus" | "tail"> & { readonly label?: string };

/**
 * Polls `baseUrl + path` (/healthz: the process serves; /readyz: every informer has listed) until it answers 200.
 * Fails at once, with the log's tail, if the operator exits meanwhile.
 */
export async function waitForProbe(
  operator: ProbeTarget,
  baseUrl: string,
  path: "/healthz" | "/readyz",
  { timeoutMs = 30_000, intervalMs = 250, signal }: WaitOptions & { intervalMs?: number } = {},
): Promise<void> {
  const label = operator.label ?? "operator";
  const what = `the ${label} (pid ${operator.pid}) to answer ${path} on ${baseUrl}`;
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (operator.exitStatus()) throw new Error(`${label} exited before ${path} answered${operator.tail()}`);
    if (signal?.aborted) throw new Error(`gave up waiting for ${what}: ${abortReason(signal)}`);
    try {
      if ((await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(5_000) })).ok) return;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${cause}${operator.tail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The last `count` lines of a log file ("(no log)" when there is none). */
export function logFileTail(file: string, count = 20): string[] {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-count);
  } catch {
    return ["(no log)"];
  }
}

function parseLine(text: string, stream: "stdout" | "stderr"): LogLine {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as LogLine;
  } catch {
    // not JSON: kept as text below
  }
  return { msg: text, stream };
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "aborted";
}
