/**
 * The instance's status as a pure function of what the reconcile observed. Conditions follow metav1.Condition
 * (lastTransitionTime moves only when a status flips, via the api's setCondition) and kstatus: every condition and
 * status.observedGeneration carry the generation they describe, and the abnormal-true pair Reconciling/Stalled is
 * present only while true, so Flux, Argo CD and Pulumi's await tell "working on it" from "stuck".
 */
import {
  Degraded,
  maxReconcileRequestLength,
  Progressing,
  Ready,
  Reconciling,
  Stalled,
  setCondition,
  type Condition,
  type ConditionUpdate,
  type MyAppInstanceSpec,
  type MyAppInstanceStatus,
  type Phase,
} from "../../api/index.ts";
import { jsonEqual } from "../desired/index.ts";
import { count, type ObservedWorkload } from "./observed.ts";
import { rolloutProgress, type RolloutProgress } from "./rollout.ts";

/** Something that keeps the instance from reaching its spec and that retries alone will not fix. */
export interface Problem {
  /** CamelCase, for the Degraded/Stalled conditions and the Warning event: `InvalidSpec`, `ChildRejected`, ... */
  readonly reason: string;
  /** What is wrong and what to do about it. */
  readonly message: string;
}

/** A step of a multi-step change that is under way (e.g. re-creating a StatefulSet): Progressing, not a problem. */
export interface Step {
  readonly reason: string;
  readonly message: string;
}

/** The step while a StatefulSet is deleted (orphaning its pods) to be re-created with a new immutable field. */
export const RecreatingWorkload = "RecreatingWorkload";
/** The step after it: the new StatefulSet has not yet adopted every pod that kept running. */
export const AdoptingPods = "AdoptingPods";

export interface StatusInput {
  /** metadata.generation of the instance. */
  readonly generation: number;
  readonly spec: MyAppInstanceSpec;
  /** The status on the live instance (undefined when it has none or it is malformed). */
  readonly previous: MyAppInstanceStatus | undefined;
  /** The pods' label selector in string form. */
  readonly selector: string;
  /** Where the instance answers in the cluster, `<service>.<namespace>.svc:<port>`; none when there is no Service. */
  readonly endpoint?: string | undefined;
  /** The workload of the kind the spec asks for, as observed after this reconcile's writes. */
  readonly workload: ObservedWorkload | undefined;
  /** The workload of the other kind, still serving while the instance moves to `workload`. */
  readonly retiring?: ObservedWorkload | undefined;
  readonly step?: Step | undefined;
  readonly problem?: Problem | undefined;
}

/** The status for `input` at `wallTime`. Deterministic: the same observation gives the same status, so no write. */
export function computeStatus(input: StatusInput, wallTime: Date): MyAppInstanceStatus {
  const { spec, previous, workload, retiring } = input;
  const progress = workload ? rolloutProgress(workload, spec.replicas) : undefined;
  const adopting = input.step ? undefined : adoptionStep(input, wallTime);
  const step = input.step ?? adopting;
  const complete = progress !== undefined && progress.complete && progress.image === spec.image && !retiring && !step;
  const problem = input.problem ?? (progress ? workloadProblem(progress) : undefined);
  // A workload its controller has not reported on yet (just created, or re-created over running pods) has no
  // counts; the last known ones stand until it reports, so readyReplicas does not dip to 0 for nothing. So do
  // they while a StatefulSet is re-created over its running pods: the old one, orphaning them as it goes, counts
  // fewer and fewer, and the new one counts only those it has adopted.
  const unreported =
    input.step?.reason === RecreatingWorkload ||
    adopting !== undefined ||
    (workload !== undefined && workload.status?.observedGeneration === undefined);
  const replicas = unreported
    ? (previous?.replicas ?? 0)
    : count(workload?.status?.replicas) + count(retiring?.status?.replicas);
  const readyReplicas = unreported
    ? (previous?.readyReplicas ?? 0)
    : count(workload?.status?.readyReplicas) + count(retiring?.status?.readyReplicas);
  const image = complete ? spec.image : previous?.image;

  let phase: Phase;
  let message: string;
  let conditions: Condition[];
  if (problem) {
    phase = "Degraded";
    message = problem.message;
    conditions = problemConditions(previous?.conditions, input.generation, problem, wallTime);
  } else if (complete) {
    phase = "Running";
    message = `${readyReplicas}/${spec.replicas} replicas ready, running ${spec.image}`;
    conditions = settle(previous?.conditions, input.generation, wallTime, [
      { type: Ready, status: "True", reason: "Available", message },
      { type: Progressing, status: "False", reason: "RolloutComplete", message: `${spec.image} is rolled out` },
      { type: Degraded, status: "False", reason: "AsExpected", message: "" },
    ]);
  } else {
    const working = step ?? progressStep(input, progress);
    phase = previous?.image === undefined && readyReplicas === 0 ? "Pending" : "Progressing";
    message = working.message;
    conditions = settle(previous?.conditions, input.generation, wallTime, [
      { type: Ready, status: "False", reason: working.reason, message: working.message },
      { type: Progressing, status: "True", reason: working.reason, message: working.message },
      { type: Degraded, status: "False", reason: "AsExpected", message: "" },
      { type: Reconciling, status: "True", reason: working.reason, message: working.message },
    ]);
  }

  return {
    conditions,
    observedGeneration: input.generation,
    replicas,
    readyReplicas,
    phase,
    ...(image !== undefined ? { image } : {}),
    message,
    selector: input.selector,
    ...(input.endpoint !== undefined ? { endpoint: input.endpoint } : {}),
  };
}

/**
 * The status for a problem found before anything could be observed (an invalid spec) or reported by the runtime
 * (a key that keeps failing): the conditions say what is wrong; counts, image and selector stay as they were.
 */
export function problemStatus(
  previous: MyAppInstanceStatus | undefined,
  generation: number,
  problem: Problem,
  wallTime: Date,
): MyAppInstanceStatus {
  return {
    ...previous,
    conditions: problemConditions(previous?.conditions, generation, problem, wallTime),
    observedGeneration: generation,
    phase: "Degraded",
    message: problem.message,
  };
}

/**
 * The status while the operator keeps failing for a transient cause (the apiserver overloaded, credentials being
 * rotated): Stalled=True says why, and nothing else moves. The instance is not Degraded (the cause is not its own,
 * and retries heal it), and Ready/Progressing still describe the workload as last seen. The next successful
 * reconcile drops Stalled (see `settle`).
 */
export function stalledStatus(
  previous: MyAppInstanceStatus | undefined,
  generation: number,
  problem: Problem,
  wallTime: Date,
): MyAppInstanceStatus {
  const update = { type: Stalled, status: "True" as const, ...problem, observedGeneration: generation };
  return { ...previous, conditions: setCondition(previous?.conditions, update, wallTime) };
}

/**
 * `next`, answering the reconcile request the instance carried when this reconcile read it (the value of its
 * `myapp.example.com/reconcile-requested-at` annotation), or still naming the last request answered when it
 * carries none (the status functions build a status afresh, which would drop it). A value longer than the status
 * may hold is not answered.
 */
export function answeringRequest(
  next: MyAppInstanceStatus,
  requested: string | undefined,
  previous: MyAppInstanceStatus | undefined,
): MyAppInstanceStatus {
  const answerable = requested !== undefined && requested.length <= maxReconcileRequestLength;
  const handled = answerable ? requested : previous?.lastHandledReconcileAt;
  return handled === undefined ? next : { ...next, lastHandledReconcileAt: handled };
}

/** True when writing `next` would change the live status; the reconcile writes only then. */
export function statusChanged(previous: MyAppInstanceStatus | undefined, next: MyAppInstanceStatus): boolean {
  return !jsonEqual(previous ?? {}, next);
}

/**
 * What the workload controller itself reports as stuck: pods it cannot create (ReplicaFailure, with the
 * apiserver's reason, so a Pod Security or quota rejection shows within seconds) or a rollout past its deadline.
 */
function workloadProblem(progress: RolloutProgress): Problem | undefined {
  if (progress.replicaFailure) {
    return {
      reason: progress.replicaFailure.reason,
      message: `pods cannot be created: ${progress.replicaFailure.message}`,
    };
  }
  if (progress.deadlineExceeded !== undefined) {
    return { reason: "ProgressDeadlineExceeded", message: progress.deadlineExceeded };
  }
  return undefined;
}

function problemConditions(
  previous: readonly Condition[] | undefined,
  generation: number,
  problem: Problem,
  wallTime: Date,
): Condition[] {
  return settle(previous, generation, wallTime, [
    { type: Ready, status: "False", reason: problem.reason, message: problem.message },
    { type: Progressing, status: "False", reason: problem.reason, message: problem.message },
    { type: Degraded, status: "True", reason: problem.reason, message: problem.message },
    { type: Stalled, status: "True", reason: problem.reason, message: problem.message },
  ]);
}

/**
 * Sets each of `updates` (stamped with `generation`), and drops the abnormal-true kstatus conditions that are not
 * among them: Reconciling and Stalled are present only while true.
 */
function settle(
  previous: readonly Condition[] | undefined,
  generation: number,
  wallTime: Date,
  updates: readonly Omit<ConditionUpdate, "observedGeneration">[],
): Condition[] {
  let conditions = (previous ?? []).filter(
    (c) => (c.type !== Reconciling && c.type !== Stalled) || updates.some((u) => u.type === c.type),
  );
  for (const update of updates)
    conditions = setCondition(conditions, { ...update, observedGeneration: generation }, wallTime);
  return conditions;
}

/**
 * After the operator re-created a StatefulSet over its running pods, the new one counts only the pods it has
 * adopted, and its controller adopts a pod only once its informer has seen the old owner reference removed, which
 * can lag behind the old StatefulSet's deletion. Until it holds as many pods as the instance had, and counts as
 * many of them ready as were, the step goes on (so the next reconcile still knows it) and the instance does not
 * report pods as lost that are serving; for at most two minutes from the start of the move.
 */
function adoptionStep({ spec, workload, retiring, previous }: StatusInput, wallTime: Date): Step | undefined {
  if (workload?.kind !== "StatefulSet" || retiring) return undefined;
  const progressing = previous?.conditions?.find((c) => c.type === Progressing);
  if (progressing?.reason !== RecreatingWorkload && progressing?.reason !== AdoptingPods) return undefined;
  // Not forever: a pod that really stopped serving during the move is reported after a while. Progressing turned
  // True when the move began.
  if (wallTime.getTime() - Date.parse(progressing.lastTransitionTime) > adoptionPatienceMs) return undefined;
  // Scaled down meanwhile: only the pods the new StatefulSet keeps are awaited.
  const before = Math.min(previous?.replicas ?? 0, spec.replicas);
  const readyBefore = Math.min(previous?.readyReplicas ?? 0, before);
  const held = count(workload.status?.replicas);
  const ready = count(workload.status?.readyReplicas);
  const reported = workload.status?.observedGeneration !== undefined;
  if (reported && held >= before && ready >= readyBefore) return undefined;
  // Its first counts after adopting can still say 0 ready for pods that never stopped serving.
  const message =
    reported && held >= before
      ? `the re-created StatefulSet holds the ${before} pods that kept running; ${ready} of the ${readyBefore} ` +
        `that were ready count as ready again`
      : `the re-created StatefulSet has adopted ${held} of the ${before} pods that kept running`;
  return { reason: AdoptingPods, message };
}

function isRollingOut(condition: Condition): boolean {
  return condition.type === Progressing && condition.status === "True" && condition.reason === "RollingOut";
}

/** How long a re-created StatefulSet may take to count the pods that kept running before they count as lost. */
const adoptionPatienceMs = 120_000;

/** Why the instance is not yet at its spec, for Progressing/Reconciling, and how far it has come. */
function progressStep(input: StatusInput, progress: RolloutProgress | undefined): Step {
  const { spec, workload, retiring, previous } = input;
  const desired = spec.replicas;
  if (workload && retiring && progress) {
    return {
      reason: "Migrating",
      message:
        `moving from a ${retiring.kind} to a ${workload.kind}: ${progress.ready}/${desired} replicas ready in the ` +
        `${workload.kind}; the ${retiring.kind} keeps serving until then`,
    };
  }
  if (!workload || !progress) return { reason: "Creating", message: `creating the workload for ${spec.image}` };
  if (previous?.image === undefined) {
    return { reason: "Creating", message: `starting ${spec.image}: ${progress.ready}/${desired} replicas ready` };
  }
  // A rollout lasts until it is complete, as `kubectl rollout status` waits: old pods still terminating after every
  // replica runs the new image, or new pods not yet ready, are its tail, not a scale or a wait of their own; the
  // reason stays RollingOut, so its last counts are progress, not a new condition.
  const tail = previous?.conditions?.some(isRollingOut) === true;
  if (!progress.observed || progress.updated < desired || progress.image !== spec.image || tail) {
    return {
      reason: "RollingOut",
      message: `rolling out ${spec.image}: ${progress.updated}/${desired} replicas updated, ${progress.ready}/${desired} ready`,
    };
  }
  if (progress.replicas !== desired) {
    return {
      reason: "Scaling",
      message: `scaling to ${desired} replicas: ${progress.replicas} exist, ${progress.ready} ready`,
    };
  }
  return { reason: "WaitingForReplicas", message: `${progress.ready}/${desired} replicas ready` };
}
