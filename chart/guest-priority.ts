/**
 * Renders run at a lower CPU priority than the operator itself. A render is bounded (CPU time, memory, wall time),
 * but while a hostile chart burns its CPU budget it competes with the operator's event loop, which reconciles every
 * other tenant and answers the admission webhooks. Ten steps below (nice 10 beside an operator at 0) a busy render
 * gets about a tenth of a core the operator wants (CFS weights 110 vs 1024), and all of it when the operator is
 * idle: it is slowed, never stopped.
 *
 * Node cannot set the niceness of a child before it executes, and Linux's niceness is per thread, inherited by the
 * threads a thread creates. So the child's main thread is lowered at once, before helm (a Go program) has started
 * most of its threads, and a sweep over /proc/<pid>/task a moment later lowers any thread created before that.
 * Raising niceness needs no privilege; a failure (the child already gone, no /proc) changes nothing else.
 */
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

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
