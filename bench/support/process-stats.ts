/** What a process costs, read from /proc: CPU seconds (user + system) and resident memory. */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

/** The fields of /proc/<pid>/stat after "(comm)" (state first: field 3 of proc(5) is index 0); undefined once gone. */
function statFields(pid: number): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * User + system CPU seconds `pid` has used so far (/proc/<pid>/stat); undefined once it is gone. With
 * `withChildren`, plus what its children that have exited and been waited for used (cutime + cstime): the helm
 * processes an operator runs for each render.
 */
export function cpuSeconds(pid: number, withChildren = false): number | undefined {
  const fields = statFields(pid);
  if (!fields) return undefined;
  // utime is field 14, stime 15, cutime 16, cstime 17 (proc(5)).
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  const ticks = Number(fields[11]) + Number(fields[12]) + (withChildren ? Number(fields[13]) + Number(fields[14]) : 0);
  return ticks / ticksPerSecond;
}

/** `pid` and every process below it (parent links of /proc/<n>/stat; this kernel may lack /proc/<pid>/task/../children). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    const child = Number(entry);
    if (!Number.isInteger(child)) continue;
    const parent = Number(statFields(child)?.[1]); // ppid is field 4
    if (!Number.isInteger(parent)) continue;
    children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

/** VmRSS of one process in bytes (0 once it is gone, or for a zombie). */
function residentBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** What {@link sampleProcessTree} keeps of one process and its descendants. */
export interface TreeSampler {
  /** The highest summed VmRSS of the tree seen so far, in bytes. */
  peakBytes(): number;
  /** The process's CPU seconds with its waited-for children's, as last read (it survives the process). */
  cpuSeconds(): number;
  /** Reads once more, then stops sampling. */
  stop(): void;
}

/**
 * Samples the summed resident memory of `pid` and its descendants every `intervalMs`, keeping the peak: an
 * operator's own memory plus that of the helm processes it runs at the same moment. A child that lives shorter
 * than one interval may be missed; the caller adds the process's own VmHWM as a floor.
 */
export function sampleProcessTree(pid: number, intervalMs = 200): TreeSampler {
  let peak = 0;
  let cpu = 0;
  const sample = () => {
    const sum = processTree(pid).reduce((total, member) => total + residentBytes(member), 0);
    peak = Math.max(peak, sum);
    cpu = cpuSeconds(pid, true) ?? cpu;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    peakBytes: () => peak,
    cpuSeconds: () => cpu,
    stop: () => {
      sample();
      clearInterval(timer);
    },
  };
}

/** The 1-, 5- and 15-minute load averages from /proc/loadavg. */
export function loadAverages(): [number, number, number] {
  const [one = NaN, five = NaN, fifteen = NaN] = readFileSync("/proc/loadavg", "utf8").split(" ").map(Number);
  return [one, five, fifteen];
}
