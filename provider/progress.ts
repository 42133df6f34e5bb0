/**
 * Progress of one wait, for the person running Pulumi, kept readable at a hundred instances: nothing while the
 * wait is short (the engine shows the resource as in progress anyway), then the latest word from the operator
 * and every change after it. No closing "Ready" line: the engine reports the outcome of every resource itself.
 */
import { realClock, type Clock } from "../kube/clock.ts";
import { stdoutLines, type LineWriter } from "./console.ts";

/** A wait shorter than this prints nothing. */
export const quietWaitMs = 5_000;

export interface WaitProgress {
  /** The wait's state now, in the operator's words; repeats are dropped. */
  report(progress: string): void;
  /** The wait is over: nothing more is printed. */
  stop(): void;
}

/** The progress of the wait of `label`, which starts now. */
export function waitProgress(label: string, write: LineWriter = stdoutLines, clock: Clock = realClock): WaitProgress {
  let latest: string | undefined;
  let printed: string | undefined;
  let loud = false;
  const print = () => {
    if (latest === undefined || latest === printed) return;
    printed = latest;
    write(`${label}: ${latest}`);
  };
  const timer = clock.setTimeout(() => {
    loud = true;
    print();
  }, quietWaitMs);
  return {
    report(progress) {
      latest = progress;
      if (loud) print();
    },
    stop() {
      clock.clearTimeout(timer);
      loud = false;
    },
  };
}
