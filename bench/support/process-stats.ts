/** What a process costs, read from /proc: CPU seconds (user + system) and resident memory. */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

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

/** One process's resident memory as /proc/<pid>/status splits it, and the executable whose file pages it maps. */
export interface ResidentSplit {
  readonly exe: string;
  /** RssAnon + RssShmem: the process's own pages. */
  readonly ownBytes: number;
  /** RssFile: pages of mapped files (its executable, shared libraries), shared with every process mapping them. */
  readonly fileBytes: number;
}

/** The resident split of `pid`; undefined once it is gone (or for a zombie, which maps nothing). */
function residentSplit(pid: number): ResidentSplit | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
    return {
      exe: readlinkSync(`/proc/${pid}/exe`),
      ownBytes: kib("RssAnon") + kib("RssShmem"),
      fileBytes: kib("RssFile"),
    };
  } catch {
    return undefined;
  }
}

/**
 * The resident memory of a set of processes, each page once: their own pages summed, and the file pages of each
 * executable counted once (the largest of the processes running it). Two `helm` processes share helm's text
 * pages; summing their VmRSS would count those twice, which a single Go process linking Helm never pays.
 */
export function treeResidentBytes(members: readonly ResidentSplit[]): number {
  const filesByExe = new Map<string, number>();
  let own = 0;
  for (const member of members) {
    own += member.ownBytes;
    filesByExe.set(member.exe, Math.max(filesByExe.get(member.exe) ?? 0, member.fileBytes));
  }
  return own + [...filesByExe.values()].reduce((sum, bytes) => sum + bytes, 0);
}

/** What {@link sampleProcessTree} keeps of one process and its descendants. */
export interface TreeSampler {
  /** The highest resident memory of the tree seen so far, in bytes ({@link treeResidentBytes}). */
  peakBytes(): number;
  /** The process's CPU seconds with its waited-for children's, as last read (it survives the process). */
  cpuSeconds(): number;
  /** Reads once more, then stops sampling. */
  stop(): void;
}

/**
 * Samples the resident memory of `pid` and its descendants every `intervalMs` ({@link treeResidentBytes}), keeping
 * the peak: an operator's own memory plus that of the helm processes it runs at the same moment. A child that
 * lives shorter than one interval may be missed; the caller adds the process's own VmHWM as a floor.
 */
export function sampleProcessTree(pid: number, intervalMs = 200): TreeSampler {
  let peak = 0;
  let cpu = 0;
  const sample = () => {
    const members = processTree(pid).flatMap((member) => residentSplit(member) ?? []);
    peak = Math.max(peak, treeResidentBytes(members));
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
