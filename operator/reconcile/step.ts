/**
 * What one step of a reconcile (finalize, children, storage, chart, status report) tells the entry, and the one
 * place where the steps' answers are combined. A step that has nothing to say returns `{}`: no problem, nothing
 * under way, no need to look again before something changes.
 */
import type { Problem, Step } from "./status.ts";

/** One step's verdict; every field is optional so "converged" is `{}`. */
export interface StepOutcome {
  /** Something retries will not fix: the instance is Degraded until its spec (or the cluster) changes. */
  readonly problem?: Problem;
  /** A multi-step change under way (Progressing), e.g. re-creating a StatefulSet or growing its volumes. */
  readonly step?: Step;
  /**
   * Look again after this long even without a change: for state the operator does not watch (a missing
   * StorageClass) or a next action of its own it is waiting to take (deleting the old workload once the new one
   * is ready). Children's watch events usually come first; this is the safety net for a missed one.
   */
  readonly requeueAfterMs?: number;
}

/**
 * The outcome of steps run in order: the first problem (the earliest cause is the one to fix; later steps may
 * only be its consequence), the furthest step under way (the last one that reported one), and the soonest
 * requeue (every waiting step gets its look).
 */
export function mergeOutcomes(...outcomes: readonly StepOutcome[]): StepOutcome {
  const problem = outcomes.find((outcome) => outcome.problem !== undefined)?.problem;
  const step = outcomes.findLast((outcome) => outcome.step !== undefined)?.step;
  const requeues = outcomes.flatMap((outcome) =>
    outcome.requeueAfterMs === undefined ? [] : [outcome.requeueAfterMs],
  );
  return {
    ...(problem ? { problem } : {}),
    ...(step ? { step } : {}),
    ...(requeues.length > 0 ? { requeueAfterMs: Math.min(...requeues) } : {}),
  };
}
