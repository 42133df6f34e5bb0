/**
 * A child process held to limits: memory and CPU time enforced by the kernel (`prlimit` sets RLIMIT_DATA and
 * RLIMIT_CPU on the child before it executes), wall time and output enforced here. Helm is a Go binary, which
 * decides the mechanism:
 *
 * - RLIMIT_AS is useless for Go: the runtime reserves address space it never touches (a 256 MiB RLIMIT_AS stops
 *   even `go version` at start, "failed to reserve page summary memory"). RLIMIT_DATA counts only writable private
 *   mappings, i.e. the heap Go actually commits: over it, Go exits with "fatal error: runtime: out of memory".
 * - Go ignores SIGXCPU, so the soft and hard CPU limits are the same and the kernel's SIGKILL ends the process.
 * - GOMEMLIMIT at three quarters of the memory limit makes Go collect harder before the hard limit, and
 *   GOMAXPROCS=1 keeps one render to one core, so K renders take at most K cores of the operator's node.
 *
 * Without prlimit (an image built FROM a base that lacks it), a watchdog reads /proc/<pid>/stat every 100 ms and
 * kills the child over either limit: weaker (a burst between two reads is not seen), which the caller logs.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { idleClassAfterCpuSeconds, lowerPriority, moveToIdleClass } from "./guest-priority.ts";
import { limitMessage, type RenderLimitKind, type RenderLimits } from "./render-limits.ts";

const mebibyte = 1024 * 1024;

/** Where prlimit is looked for (util-linux installs it in /usr/bin; the operator image carries it there). */
const prlimitPaths = ["/usr/bin/prlimit", "/bin/prlimit", "/usr/local/bin/prlimit"];

/** The prlimit binary, or undefined when this machine has none (then the watchdog enforces the limits). */
export function findPrlimit(): string | undefined {
  if (process.platform !== "linux") return undefined;
  return prlimitPaths.find((candidate) => existsSync(candidate));
}

export interface GuestCommand {
  readonly binary: string;
  readonly args: readonly string[];
  /** The child's whole environment (nothing of the parent's is inherited). */
  readonly env: Readonly<Record<string, string>>;
  readonly limits: RenderLimits;
  /** The prlimit binary; undefined: the /proc watchdog. */
  readonly prlimit: string | undefined;
  /** The chrt binary: a guest past {@link idleClassAfterCpuSeconds} moves to the idle class; undefined: it stays niced. */
  readonly chrt: string | undefined;
  /**
   * Whether a long guest (past {@link idleClassAfterCpuSeconds} of CPU) should give way now: while it returns true
   * such a guest is stopped and the promise rejects with {@link GuestYielded} (chart/long-render-yield.ts). Unset: it
   * runs to its end or its limits.
   */
  readonly yieldWhen?: () => boolean;
}

export interface GuestFailureDetails {
  readonly limit?: RenderLimitKind;
  readonly stderr?: string;
  /** The exit code, or the spawn error's code (`ENOENT`). */
  readonly code?: number | string | null;
}

/** A guest that failed: over a limit (`limit` set), or exited non-zero (its stderr), or could not start (`code`). */
export class GuestFailure extends Error {
  override readonly name = "GuestFailure";
  readonly details: GuestFailureDetails;
  constructor(message: string, details: GuestFailureDetails) {
    super(message);
    this.details = details;
  }
}

/** A long guest stopped because {@link GuestCommand.yieldWhen} asked it to give way: nothing is wrong with it. */
export class GuestYielded extends Error {
  override readonly name = "GuestYielded";
  /** CPU time it had used when it was stopped. */
  readonly cpuSeconds: number;
  constructor(cpuSeconds: number) {
    super(`stopped after ${cpuSeconds.toFixed(1)} s of CPU to give way to waiting work`);
    this.cpuSeconds = cpuSeconds;
  }
}

/** The most of a guest's stderr kept for its error message. */
const maxStderrBytes = 64 * 1024;

/** Runs `command` and resolves its stdout, or rejects with a GuestFailure. */
export function runGuest(command: GuestCommand): Promise<string> {
  const { limits } = command;
  const memoryBytes = limits.memoryMiB * mebibyte;
  const outputBytes = limits.outputMiB * mebibyte;
  const argv = command.prlimit
    ? [command.prlimit, `--data=${memoryBytes}`, `--cpu=${limits.cpuSeconds}`, command.binary, ...command.args]
    : [command.binary, ...command.args];
  const env = {
    ...command.env,
    GOMEMLIMIT: `${Math.floor(limits.memoryMiB * 0.75)}MiB`,
    GOMAXPROCS: "1",
  };
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] ?? "", argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
    // Below the operator's own priority: a render never competes on equal terms with reconciles and webhooks.
    if (child.pid !== undefined) lowerPriority(child.pid);
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let stoppedFor: RenderLimitKind | "yield" | undefined;
    let cpuAtYield = 0;
    const stop = (kind: RenderLimitKind | "yield") => {
      if (stoppedFor) return;
      stoppedFor = kind;
      child.kill("SIGKILL");
    };
    child.stdout.on("data", (chunk: Buffer) => {
      if (stoppedFor) return;
      stdoutBytes += chunk.length;
      // Over the cap the chunks are dropped at once: the output limit bounds the operator's memory, not helm's.
      if (stdoutBytes > outputBytes) return stop("output");
      stdout.push(chunk);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < maxStderrBytes) stderr += chunk.slice(0, maxStderrBytes - stderr.length);
    });
    const wall = setTimeout(() => stop("time"), limits.timeoutSeconds * 1000);
    // Every 100 ms: the limits, where no prlimit enforces them; a long render gives way, or moves to the idle class.
    const watchdog = !command.prlimit;
    const { yieldWhen } = command;
    let idleClass = command.chrt;
    const monitor =
      watchdog || idleClass || yieldWhen
        ? setInterval(() => {
            const usage = procUsage(child.pid);
            if (!usage) return;
            const long = usage.cpuSeconds >= idleClassAfterCpuSeconds;
            if (watchdog && usage.rssBytes > memoryBytes) stop("memory");
            else if (watchdog && usage.cpuSeconds > limits.cpuSeconds) stop("cpu");
            else if (long && yieldWhen?.()) {
              cpuAtYield = usage.cpuSeconds;
              stop("yield");
            } else if (idleClass && long && child.pid !== undefined) {
              void moveToIdleClass(idleClass, child.pid);
              idleClass = undefined; // once
            }
          }, 100)
        : undefined;
    const done = () => {
      clearTimeout(wall);
      if (monitor) clearInterval(monitor);
    };
    child.on("error", (error: NodeJS.ErrnoException) => {
      done();
      reject(new GuestFailure(error.message, { code: error.code ?? null }));
    });
    child.on("close", (code, signal) => {
      done();
      if (stoppedFor === "yield") return reject(new GuestYielded(cpuAtYield));
      const limit = stoppedFor ?? kernelLimit(command.prlimit !== undefined, code, signal, stderr);
      if (limit) return reject(new GuestFailure(limitMessage(limit, limits), { limit, stderr }));
      if (code !== 0) return reject(new GuestFailure(stderr.trim() || `exited with ${code}`, { stderr, code }));
      resolve(Buffer.concat(stdout).toString("utf8"));
    });
  });
}

/**
 * The kernel's limits show as: a SIGKILL nobody here sent (RLIMIT_CPU's hard limit; Go ignores the SIGXCPU
 * before it), or Go's own out-of-memory exit once RLIMIT_DATA refuses a mapping.
 */
function kernelLimit(
  limited: boolean,
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
): RenderLimitKind | undefined {
  if (!limited) return undefined;
  if (signal === "SIGKILL") return "cpu";
  if (code !== 0 && /fatal error: (runtime: )?out of memory|cannot allocate memory/i.test(stderr)) return "memory";
  return undefined;
}

/** Resident memory and CPU time of `pid` from /proc (Linux), or undefined when it cannot be read. */
function procUsage(pid: number | undefined): { rssBytes: number; cpuSeconds: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces), from field 3 on: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    // stat's rss counts pages, whose size differs (16 or 64 KiB on some arm64 kernels): status says kB.
    const rssKiB = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    if (rssKiB === undefined) return undefined;
    // USER_HZ is 100 on every Linux architecture Node runs on.
    return { cpuSeconds: ticks / 100, rssBytes: Number(rssKiB) * 1024 };
  } catch {
    return undefined;
  }
}
