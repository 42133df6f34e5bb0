/** What a process costs, read from /proc: CPU seconds (user + system) and resident memory. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

/** User + system CPU seconds `pid` has used so far (/proc/<pid>/stat); undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Fields after "(comm)": state is field 3, utime 14, stime 15 (proc(5)).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** The 1-, 5- and 15-minute load averages from /proc/loadavg. */
export function loadAverages(): [number, number, number] {
  const [one = NaN, five = NaN, fifteen = NaN] = readFileSync("/proc/loadavg", "utf8").split(" ").map(Number);
  return [one, five, fifteen];
}
