/**
 * Pid files that cannot point at the wrong process. A pid alone is reused (after a reboot, or a busy day), so a
 * record also keeps the process's start time (field 22 of /proc/PID/stat, in clock ticks since boot, plus the boot
 * id); a process is "ours" only while all three match. Nothing is signalled or trusted on a pid alone.
 */
import { existsSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";

export interface ProcessRecord {
  readonly pid: number;
  readonly startTime: string;
  readonly bootId: string;
}

function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "";
  }
}

/** The process's start time in clock ticks since boot, or undefined when there is no such process. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** The process's command line, arguments joined by spaces ("" when it is gone). */
export function processCommandLine(pid: number): string {
  return processArgv(pid).join(" ").trim();
}

/** The process's arguments, each as given (none when it is gone). */
export function processArgv(pid: number): string[] {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    if (argv.at(-1) === "") argv.pop(); // each argument ends in a NUL
    return argv;
  } catch {
    return [];
  }
}

/** The pid of the process's parent, or undefined when there is no such process. */
export function processParent(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // As in processStartTime: field 4, the second after the command name's last ')'.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** The process's working directory ("" when it is gone or not ours to read). */
export function processCwd(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return "";
  }
}

export function recordOf(pid: number): ProcessRecord {
  const startTime = processStartTime(pid);
  if (startTime === undefined) throw new Error(`process ${pid} is not running`);
  return { pid, startTime, bootId: bootId() };
}

/** True while the recorded process (same pid, same start, same boot) still runs. */
export function isRunning(record: ProcessRecord): boolean {
  return record.bootId === bootId() && processStartTime(record.pid) === record.startTime;
}

export function writeProcessRecord(file: string, pid: number, extra: Record<string, unknown> = {}): ProcessRecord {
  const record = recordOf(pid);
  writeFileSync(file, JSON.stringify({ ...extra, ...record }) + "\n");
  return record;
}

/** The record in `file` if it names a process that still runs; a stale or unreadable file is removed. */
export function runningProcess<T extends ProcessRecord = ProcessRecord>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  let record: T | undefined;
  try {
    record = JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    record = undefined; // an old plain-pid file, or a torn write: not trustworthy
  }
  if (record && typeof record.pid === "number" && isRunning(record)) return record;
  rmSync(file, { force: true });
  return undefined;
}

/** SIGTERM, then SIGKILL after `graceMs`; only while the record still names the same process. */
export async function stopProcess(record: ProcessRecord, graceMs = 10_000): Promise<void> {
  if (!isRunning(record)) return;
  process.kill(record.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (isRunning(record) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isRunning(record)) process.kill(record.pid, "SIGKILL");
}
