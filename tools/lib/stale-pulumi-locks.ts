/**
 * Locks the project's file backend holds for a pulumi that no longer runs. pulumi removes a stack's lock when it
 * ends; one killed (kill -9, a crash, a closed terminal) leaves it, and every later command of that stack then
 * fails with "the stack is currently locked" until someone deletes the file by hand. A lock is removed only when it
 * names this host and a pid that no longer runs: a live pulumi's, or another machine's, is kept.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** A lock file's content, as pulumi's file backend writes it. */
interface LockContent {
  readonly pid?: unknown;
  readonly hostname?: unknown;
}

/** One removed lock: the stack it held (`project/stack`) and the pid that held it. */
export interface StaleLock {
  readonly stack: string;
  readonly pid: number;
}

/**
 * Removes the stale locks under `backendDir` (a `file://` backend's directory) and says which it removed. A lock
 * file that cannot be read or parsed is left alone (it may be one being written).
 */
export function removeStaleLocks(
  backendDir: string,
  host: string = os.hostname(),
  running: (pid: number) => boolean = isRunning,
): StaleLock[] {
  const locksDir = path.join(backendDir, ".pulumi", "locks");
  const removed: StaleLock[] = [];
  for (const file of lockFiles(locksDir)) {
    let content: LockContent;
    try {
      content = JSON.parse(readFileSync(file, "utf8")) as LockContent;
    } catch {
      continue;
    }
    const { pid, hostname } = content;
    if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0 || hostname !== host || running(pid)) {
      continue;
    }
    rmSync(file, { force: true });
    // .pulumi/locks/<organization>/<project>/<stack>/<id>.json
    const stack = path.relative(locksDir, path.dirname(file)).split(path.sep).slice(-2).join("/");
    removed.push({ stack, pid });
  }
  return removed;
}

/** Every `*.json` below `dir`, none when it does not exist. */
function lockFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return lockFiles(full);
    return entry.isFile() && entry.name.endsWith(".json") ? [full] : [];
  });
}

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
