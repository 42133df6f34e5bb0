/**
 * Renders run at a lower CPU priority than the operator itself. A render is bounded (CPU time, memory, wall time),
 * but while a hostile chart burns its CPU budget it competes with the operator's event loop, which reconciles every
 * other tenant and answers the admission webhooks, and (where they share a node, as on the local platform) with the
 * apiserver itself. Two steps:
 *
 * 1. Every render starts ten steps of niceness below the operator (nice 10 beside 0): a busy render gets about a
 *    tenth of a core the operator wants (CFS weights 110 vs 1024), and all of it when the operator is idle. Node
 *    cannot set the niceness of a child before it executes, and Linux's niceness is per thread, inherited by the
 *    threads a thread creates. So the child's main thread is lowered at once, before helm (a Go program) has started
 *    most of its threads, and a sweep over /proc/<pid>/task a moment later lowers any thread created before that.
 * 2. A render that has used more CPU than application charts need ({@link idleClassAfterCpuSeconds}) moves to
 *    Linux's idle scheduling class (SCHED_IDLE, util-linux's `chrt --all-tasks --idle --pid 0`): a task that wakes
 *    takes the core at once, where beside a niced render it waits for the end of the render's slice. In the
 *    hostile-tenants chaos (test/chaos) that wait was most of what the attackers cost the well-behaved tenants:
 *    their p99 under attack was 1.43-1.82 times their p99 without at nice 10, 1.30-1.42 in the idle class.
 *    Only long renders move, because the idle class gets almost nothing of a saturated core: a well-behaved render
 *    on a node busy for a minute would run out of wall time. In a pod the classes compete inside the pod's cgroup,
 *    so there only the operator itself can starve a render.
 *
 * Even in the idle class a long render costs the others something, so while the operator has work it gives way
 * altogether (long-render-yield.ts).
 *
 * Raising niceness and moving to the idle class need no privilege or capability; a failure (the child already gone,
 * no /proc, no chrt, a seccomp profile that refuses it) changes nothing else.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** CPU seconds after which a render moves to the idle class: 10 times this repository's chart's render. */
export const idleClassAfterCpuSeconds = 1;

/** Where chrt is looked for (util-linux installs it in /usr/bin; the operator image carries it there). */
const chrtPaths = ["/usr/bin/chrt", "/bin/chrt", "/usr/local/bin/chrt"];

/** The chrt binary, or undefined (not Linux, or no chrt: long renders stay at their niceness). */
export function findChrt(): string | undefined {
  if (process.platform !== "linux") return undefined;
  return chrtPaths.find((candidate) => existsSync(candidate));
}

/** Moves every thread of `pid` to the idle scheduling class with `chrt`; best effort, resolves when chrt is done. */
export function moveToIdleClass(chrt: string, pid: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(chrt, ["--all-tasks", "--idle", "--pid", "0", String(pid)], { stdio: "ignore" });
    child.on("error", () => resolve());
    child.on("close", () => resolve());
  });
}

/** How far below the operator's own priority a render runs. */
export const guestNicenessStep = 10;

/** Linux's lowest priority (highest niceness). */
const lowestPriority = 19;

/**
 * The niceness of a render: the operator's own plus {@link guestNicenessStep}, at most 19. Relative, because an
 * operator already started at nice 5 would otherwise give its renders only 5 below it, and one started at nice 15
 * could not set 10 at all (lowering niceness needs privilege).
 */
export function guestNiceness(operatorNiceness: number = getPriority()): number {
  return Math.min(lowestPriority, operatorNiceness + guestNicenessStep);
}

/** When the thread sweeps run after the start, ms: one for the Go runtime's start, one for a late thread. */
const sweepDelaysMs = [20, 200];

/** Lowers the CPU priority of `pid` and, shortly after, of each of its threads; best effort. */
export function lowerPriority(pid: number, niceness: number = guestNiceness()): void {
  renice(pid, niceness);
  for (const delay of sweepDelaysMs) setTimeout(() => reniceThreads(pid, niceness), delay).unref();
}

function reniceThreads(pid: number, niceness: number): void {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return; // exited, or no /proc: nothing to lower
  }
  for (const thread of threads) renice(Number(thread), niceness);
}

function renice(id: number, niceness: number): void {
  try {
    setPriority(id, niceness);
  } catch {
    // Gone already (ESRCH), or not permitted: the render still runs, at the operator's priority.
  }
}
