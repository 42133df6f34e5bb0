/** The processes a command started, from /proc: to prove that none is left behind once it is gone. */
import { readdirSync, readFileSync } from "node:fs";

/** A process as /proc shows it; `started` (clock ticks since boot) tells a reused pid from the original. */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly started: string;
  readonly command: string;
}

export function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name in parentheses may contain spaces and parentheses: the fields start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return undefined; // a zombie has exited; it only waits to be reaped
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    return { pid, ppid: Number(fields[1]), started: fields[19] ?? "", command };
  } catch {
    return undefined; // gone
  }
}

/** Every live process. */
export function allProcesses(): ProcessInfo[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => readProcess(Number(entry)))
    .filter((p): p is ProcessInfo => p !== undefined);
}

/** Every live descendant of `root`. */
export function descendants(root: number): ProcessInfo[] {
  const all = allProcesses();
  const found: ProcessInfo[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

/** True while the very process `p` (same pid and start time) still runs. */
export const stillRunning = (p: ProcessInfo) => readProcess(p.pid)?.started === p.started;
