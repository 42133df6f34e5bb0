/**
 * What the operator's status says about an instance the provider just applied: Ready for the applied generation,
 * stuck for a reason retries will not fix, or still on its way (and how far). Pure, so every case is a unit test.
 */
import { Degraded, Ready, Stalled, TransientFailure, findCondition, type Condition } from "../../api/index.ts";
import type { LiveInstance } from "../manifest.ts";

/** The verdict on one observation. */
export type Readiness =
  | { readonly state: "ready" }
  /** The operator reports a permanent problem with this generation (Degraded, or Stalled for a permanent reason). */
  | { readonly state: "failed"; readonly reason: string; readonly message: string }
  /**
   * `progress` is the line to show while waiting, without the instance's label; `awaitingOperator` when no
   * operator has acted on this update yet (nothing has observed its generation or answered its request).
   */
  | { readonly state: "waiting"; readonly progress: string; readonly awaitingOperator?: true };

/**
 * Ready means Ready=True computed from a generation at least `generation` (the one the apply produced), so a
 * Ready=True left over from the previous spec does not count. Failed means Stalled=True or Degraded=True for
 * that generation: the operator sets both for permanent problems (an invalid spec, a storage change the class
 * cannot do, a rollout past its deadline). Stalled with reason TransientFailure alone (the operator keeps
 * retrying an apiserver outage, throttling, credentials being rotated) is still on its way: the wait goes on until
 * its timeout, showing the operator's message. With `reconcileRequest` (the value the apply put in the
 * reconcile-request annotation), a status that answers another request does not count either way.
 */
export function assessReadiness(instance: LiveInstance, generation: number, reconcileRequest?: string): Readiness {
  if (instance.metadata.deletionTimestamp) {
    return { state: "failed", reason: "Deleting", message: "the instance is being deleted" };
  }
  const status = instance.status ?? {};
  // The status answers an older request: its conditions may predate a cause fixed outside the spec. An operator
  // that has never answered one (older than this field, or not there yet) is judged by generation alone.
  const answered = status.lastHandledReconcileAt;
  if (reconcileRequest !== undefined && answered !== undefined && answered !== reconcileRequest) {
    return {
      state: "waiting",
      progress: "waiting for the operator to act on this update's reconcile request",
      awaitingOperator: true,
    };
  }
  const observed = status.observedGeneration;
  const current = (condition: Condition | undefined) =>
    condition !== undefined && (condition.observedGeneration ?? observed ?? -1) >= generation;

  const ready = findCondition(status.conditions, Ready);
  if (ready?.status === "True" && current(ready)) return { state: "ready" };

  const stalled = findCondition(status.conditions, Stalled);
  const retrying = stalled?.status === "True" && stalled.reason === TransientFailure && current(stalled);
  for (const type of [Degraded, ...(retrying ? [] : [Stalled])]) {
    const condition = findCondition(status.conditions, type);
    if (condition?.status === "True" && current(condition)) {
      return { state: "failed", reason: condition.reason, message: condition.message };
    }
  }
  if (retrying) return { state: "waiting", progress: `the operator is retrying: ${stalled.message}` };

  if (observed === undefined || observed < generation) {
    return {
      state: "waiting",
      progress: `waiting for the operator to act on generation ${generation}`,
      awaitingOperator: true,
    };
  }
  // The operator's own words for this generation say the most ("rolling out nginx:1.28: 2/3 replicas updated,
  // 3/3 ready"); without them, the counts (capped: during a surge old and new pods are both ready).
  if (ready?.status === "False" && ready.message && current(ready)) {
    return { state: "waiting", progress: ready.message };
  }
  const desired = instance.spec?.replicas;
  const readyCount = status.readyReplicas ?? 0;
  const counts =
    desired === undefined
      ? `${readyCount} replicas ready`
      : `${Math.min(readyCount, desired)}/${desired} replicas ready`;
  return { state: "waiting", progress: counts };
}

/** After this long without any operator acting on an update, the wait says what to check. */
export const operatorSilenceMs = 30_000;

/**
 * The phase a wait shows for `readiness`: the operator's words, and, once the wait has been `silent` (no operator
 * acted for {@link operatorSilenceMs}), what to check, so a missing operator (an external placement nobody started,
 * an image that never runs) is named within seconds instead of after the whole timeout. The caller's timer decides
 * `silent`, not a clock reading: a timer may fire a millisecond before the clock says its delay has passed.
 */
export function waitingPhase(readiness: Readiness & { state: "waiting" }, silent: boolean): string {
  if (!readiness.awaitingOperator || !silent) return readiness.progress;
  return (
    `${readiness.progress}; no operator has acted on it yet: is one running and watching this namespace? (in the ` +
    "cluster: the MyAppOperator's Deployment and its pods; outside it: `npx --no-install myapp-operator`)"
  );
}

/**
 * `Ready=False Reason: message` lines of the conditions that explain the state, for error messages: Ready, and
 * any other condition that is True and says something Ready does not. A condition computed for an older
 * generation than `generation` says so, so a stale Ready=True cannot mislead.
 */
export function describeConditions(instance: LiveInstance | undefined, generation?: number): string[] {
  const status = instance?.status;
  const conditions = status?.conditions ?? [];
  const ready = findCondition(conditions, Ready);
  return conditions
    .filter((c) => c.type === Ready || (c.status === "True" && c.message !== ready?.message))
    .map((c) => {
      const observed = c.observedGeneration ?? status?.observedGeneration;
      const stale = generation !== undefined && observed !== undefined && observed < generation;
      return `${c.type}=${c.status} ${c.reason}${c.message ? `: ${c.message}` : ""}${stale ? ` (as of generation ${observed})` : ""}`;
    });
}
