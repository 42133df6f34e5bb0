/**
 * The dynamic provider runs in a process the pulumi engine starts (Pulumi's dynamic-provider host) and must not
 * outlive it. When `pulumi up` is SIGKILLed, nothing tells the host: its gRPC server idles on, a wait for Ready
 * keeps watching the cluster, and its next progress line hits the closed pipe. Node reports that EPIPE as an
 * 'error' event nobody listens to, the host's uncaught-exception handler logs it to the equally dead stderr,
 * which fails again: a hot loop that grew to 885 MB in 3 minutes. This watch ends the process instead, as soon
 * as either sign shows: a write to stdout or stderr fails, or the parent (the engine) is gone.
 *
 * Exiting is safe: everything the provider does is level-based and idempotent (a server-side apply, then a
 * wait). What was applied stays applied; the interrupted operation is a pending operation in the stack's state,
 * which `pulumi refresh --clear-pending-creates` and the next `pulumi up` resolve (README, Troubleshooting).
 */

/** The parts of a writable stream the watch listens to. */
export interface WatchedStream {
  on(event: string, listener: (error: Error) => void): unknown;
}

export interface EngineWatchOptions {
  /** @default [process.stdout, process.stderr] */
  readonly streams?: readonly WatchedStream[];
  /** The current parent pid. @default () => process.ppid */
  readonly parentPid?: () => number;
  /** How often to look at the parent. @default 1000 */
  readonly intervalMs?: number;
  /** Ends the process; it must not write to the dead pipes. @default process.exit */
  readonly exit?: (code: number) => void;
}

/** A handle to stop watching (tests). */
export interface EngineWatch {
  stop(): void;
}

/**
 * Exits (status 1) once the engine is gone: a failed write to one of `streams` (EPIPE, or any error: the pipes
 * are the engine's), or the parent process changed (the engine died and the process was re-parented to init or
 * a subreaper). The parent check is an unref'd timer: it never keeps the process alive by itself.
 */
export function exitWhenEngineGone(options: EngineWatchOptions = {}): EngineWatch {
  const streams = options.streams ?? [process.stdout, process.stderr];
  const parentPid = options.parentPid ?? (() => process.ppid);
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const engine = parentPid();
  let gone = false;
  const leave = () => {
    if (gone) return;
    gone = true;
    clearInterval(timer);
    // No message: whoever would read it is gone, and writing is what fails.
    exit(1);
  };
  for (const stream of streams) stream.on("error", leave);
  const timer = setInterval(() => {
    if (parentPid() !== engine) leave();
  }, options.intervalMs ?? 1_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** True inside Pulumi's dynamic-provider host (its entry point is @pulumi/pulumi/cmd/dynamic-provider). */
export function inDynamicProviderHost(argv: readonly string[] = process.argv): boolean {
  return /[\\/]cmd[\\/]dynamic-provider([\\/]index\.js)?$/.test(argv[1] ?? "");
}
