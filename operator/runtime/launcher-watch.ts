/**
 * A process started by `npx myapp-operator` or `npm run operator` has two wrappers: npm, and the `sh -c` npm runs
 * the command in. npm forwards SIGTERM and SIGINT to that shell, not to us, and the shell does not pass them on:
 * `kill <npx's pid>` (a script's `kill $!`, a supervisor stopping npm) ends both wrappers and leaves the operator
 * running with no parent, still holding its ports and its Lease. Ctrl-C in a terminal is not affected (the whole
 * foreground group gets it). So, when npm started this process, the wrappers' end counts as a termination signal.
 *
 * Only then: a process whose parent is not npm's shell (a container's init, systemd, a launcher that detaches it,
 * `nohup`) keeps running whatever happens to its parent, as it should.
 */
import { readFileSync } from "node:fs";

/** The two processes npm put between the user and this one. */
export interface NpmWrappers {
  /** The `sh -c <script>` npm spawned: our parent. */
  readonly shell: number;
  /** npm itself: the shell's parent. */
  readonly npm: number;
}

/** What the watch reads of other processes (Linux's /proc by default; tests pass a table). */
export interface ProcessTable {
  /** The process's argv, or undefined once it is gone (or unreadable). */
  commandLine(pid: number): readonly string[] | undefined;
  /** The process's parent pid, or undefined once it is gone. */
  parentOf(pid: number): number | undefined;
}

/**
 * npm's wrappers when npm started this process (npm exec, npx, npm run, npm start): npm says so in
 * `npm_lifecycle_script`, and our parent is the shell running that script (npm appends the arguments). Undefined otherwise, including a process that merely inherited npm's environment from an ancestor (a
 * launcher run by `npm start` that starts the operator itself).
 */
export function npmWrappers(
  env: NodeJS.ProcessEnv,
  parent: number = process.ppid,
  table: ProcessTable = procTable,
): NpmWrappers | undefined {
  const script = env["npm_lifecycle_script"];
  if (!script) return undefined;
  const argv = table.commandLine(parent);
  // `sh -c SCRIPT ARGS...` (or npm's script-shell, e.g. bash): argv is [shell, "-c", the whole command].
  if (!argv || argv.length !== 3 || argv[1] !== "-c" || !(argv[2] ?? "").startsWith(script)) return undefined;
  const npm = table.parentOf(parent);
  return npm === undefined || npm <= 1 ? undefined : { shell: parent, npm };
}

export interface LauncherWatchOptions {
  /** Our parent pid now. @default () => process.ppid */
  readonly parentPid?: () => number;
  readonly table?: ProcessTable;
  /** How often to look. @default 1000 */
  readonly intervalMs?: number;
}

/**
 * Calls `onGone` once, when either wrapper is gone: our parent is no longer npm's shell (it ended; we were
 * re-parented to init or a subreaper), or the shell's parent is no longer npm (npm was SIGKILLed). The timer is
 * unref'd: it never keeps the process alive by itself. Returns a function that stops watching.
 */
export function onLauncherGone(
  wrappers: NpmWrappers,
  onGone: () => void,
  options: LauncherWatchOptions = {},
): () => void {
  const parentPid = options.parentPid ?? (() => process.ppid);
  const table = options.table ?? procTable;
  const timer = setInterval(() => {
    if (parentPid() === wrappers.shell && table.parentOf(wrappers.shell) === wrappers.npm) return;
    clearInterval(timer);
    onGone();
  }, options.intervalMs ?? 1_000);
  timer.unref();
  return () => clearInterval(timer);
}

/** Linux's /proc. Elsewhere every read is undefined, so {@link npmWrappers} finds none and nothing is watched. */
export const procTable: ProcessTable = {
  commandLine(pid) {
    const text = readProc(`/proc/${String(pid)}/cmdline`);
    return text === undefined ? undefined : text.split("\0").filter((arg) => arg !== "");
  },
  parentOf(pid) {
    const text = readProc(`/proc/${String(pid)}/stat`);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after its last ")".
    const fields = text?.slice(text.lastIndexOf(")") + 2).split(" ");
    const parent = Number(fields?.[1]);
    return Number.isInteger(parent) && parent > 0 ? parent : undefined;
  },
};

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
