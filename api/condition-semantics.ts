/**
 * What the conditions mean, and how to change them without noise: pure functions over `metav1.Condition` lists.
 * Ready/Progressing/Degraded are what people read; Reconciling/Stalled are kstatus's "abnormal-true" pair, which
 * lets kstatus-based tools (Flux, `kubectl wait`, Pulumi's await logic) tell "still working" from "stuck".
 */
import type { Condition, ConditionStatus } from "./condition-schema.ts";
import type { MyAppInstanceObject } from "./instance.ts";

/** True when the application serves at the desired spec. */
export const Ready = "Ready";
/** True while a rollout or scale is under way. */
export const Progressing = "Progressing";
/** True when the instance cannot reach its spec for a reason that retries will not fix alone. */
export const Degraded = "Degraded";
/** kstatus: True while the operator has not finished acting on the latest generation. */
export const Reconciling = "Reconciling";
/** kstatus: True when the operator has given up making progress (for example, a permanent spec error). */
export const Stalled = "Stalled";

/**
 * The Stalled reason while the operator keeps retrying a transient failure (the apiserver unavailable or
 * throttling, credentials being rotated, RBAC rolling out). The instance is not Degraded and the retries go on
 * by themselves, so a wait (the provider's, `kubectl wait`) should keep waiting rather than fail.
 */
export const TransientFailure = "TransientFailure";

/** Every condition type this API defines. */
export const conditionTypes = { Ready, Progressing, Degraded, Reconciling, Stalled } as const;

/** One of {@link conditionTypes}. */
export type ConditionType = (typeof conditionTypes)[keyof typeof conditionTypes];

/** A condition to set: its transition time is decided by {@link setCondition}. */
export type ConditionUpdate = Omit<Condition, "lastTransitionTime"> & { lastTransitionTime?: string };

/** The condition of a type, if present. */
export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/**
 * Returns the list with `next` in place of the condition of the same type (appended when new). The transition
 * time moves to `now` only when the status flips, as `meta.SetStatusCondition` does: it answers "since when",
 * and rewriting it on every reconcile would also make every status write a change.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: ConditionUpdate,
  now: Date,
): Condition[] {
  const list = conditions ?? [];
  const previous = findCondition(list, next.type);
  const lastTransitionTime =
    previous !== undefined && previous.status === next.status
      ? previous.lastTransitionTime
      : (next.lastTransitionTime ?? rfc3339Seconds(now));
  const condition: Condition = { ...next, lastTransitionTime };
  return previous === undefined
    ? [...list, condition]
    : list.map((existing) => (existing.type === next.type ? condition : existing));
}

/** True when the condition of `type` has `status`. */
export function hasConditionStatus(
  conditions: readonly Condition[] | undefined,
  type: string,
  status: ConditionStatus,
): boolean {
  return findCondition(conditions, type)?.status === status;
}

/**
 * True when the instance is Ready for the spec it has now: Ready=True, computed from a generation at least as new
 * as `metadata.generation`. A Ready=True left over from the previous spec does not count.
 */
export function isReady(instance: Pick<MyAppInstanceObject, "metadata" | "status">): boolean {
  const ready = findCondition(instance.status?.conditions, Ready);
  if (ready?.status !== "True") return false;
  const observed = ready.observedGeneration ?? instance.status?.observedGeneration;
  const generation = instance.metadata.generation;
  if (generation === undefined) return true;
  return observed !== undefined && observed >= generation;
}

// metav1.Time serializes to whole seconds; writing milliseconds would change on every round trip.
function rfc3339Seconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}
