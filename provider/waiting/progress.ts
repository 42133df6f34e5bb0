/**
 * Progress of one wait, for the person running Pulumi, kept readable at a hundred instances: nothing while the
 * wait is short (the engine shows the resource as in progress anyway), then the latest word from the operator
 * with how long the wait has run out of how long it may (`12s of 600s`), again at every change, and again at
 * least every {@link refreshMs} when nothing changes, so a long wait never looks like a hung one. No closing
 * "Ready" line: the engine reports the outcome of every resource itself.
 *
 * Every line names the instance (`web (shop/web-095128ad): ...`): the dynamic-provider host gives the provider
 * no URN, so the CLI shows these lines under the stack, not under the resource (see the README).
 */
import { realClock, type Clock, type TimerHandle } from "../../kube/clock.ts";
import { stdoutLines, type LineWriter } from "../console.ts";

/** A wait shorter than this prints nothing. */
export const quietWaitMs = 5_000;

/** The longest a wait goes without a line, even when nothing changed. */
export const refreshMs = 30_000;

/** Where a wait stands: the operator's words for it, and the time spent out of the time allowed. */
export interface WaitState {
  /** Who waits: see {@link instanceLabel}. */
  readonly label: string;
  /** The phase, in the operator's words: "waiting for the operator to act on generation 1", "2/3 replicas ready". */
  readonly phase: string;
  readonly elapsedMs: number;
  readonly timeoutMs: number;
}

/** `web (shop/web-095128ad): 2/3 replicas ready (12s of 600s)`. Seconds are whole, rounded down. */
export function progressLine(state: WaitState): string {
  const elapsed = Math.max(0, Math.floor(state.elapsedMs / 1000));
  const timeout = Math.ceil(state.timeoutMs / 1000);
  return `${state.label}: ${state.phase} (${elapsed}s of ${timeout}s)`;
}

export interface WaitProgress {
  /** The wait's phase now, in the operator's words; a repeat prints nothing until the next refresh. */
  report(phase: string): void;
  /** The wait is over: nothing more is printed. */
  stop(): void;
}

export interface WaitProgressOptions {
  /** How long the wait may last, for the "of 600s" part. */
  readonly timeoutMs: number;
  /** @default stdout */
  readonly write?: LineWriter;
  /** @default the process clock */
  readonly clock?: Clock;
  /** @default {@link refreshMs} */
  readonly refreshMs?: number;
  /** When the time `timeoutMs` bounds began (the clock's monotonic ms), if before now. @default now */
  readonly startedMs?: number;
}

/** The progress of the wait of `label`, which starts now (its time counted from `startedMs`). */
export function waitProgress(label: string, options: WaitProgressOptions): WaitProgress {
  const write = options.write ?? stdoutLines;
  const clock = options.clock ?? realClock;
  const every = Math.min(options.refreshMs ?? refreshMs, refreshMs);
  const started = options.startedMs ?? clock.monotonicMs();
  let phase: string | undefined;
  let printedPhase: string | undefined;
  let timer: TimerHandle | undefined;
  let stopped = false;
  // Quiet until the first period is over; from then on every change prints at once.
  let loud = false;

  const print = () => {
    if (stopped || phase === undefined) return;
    printedPhase = phase;
    write(progressLine({ label, phase, elapsedMs: clock.monotonicMs() - started, timeoutMs: options.timeoutMs }));
    // The next line is due a full period after this one, whatever printed it.
    schedule(every);
  };
  const schedule = (delayMs: number) => {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = clock.setTimeout(() => {
      timer = undefined;
      loud = true;
      if (phase === undefined) schedule(every);
      else print();
    }, delayMs);
  };
  schedule(quietWaitMs);

  return {
    report(next) {
      phase = next;
      if (loud && next !== printedPhase) print();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
