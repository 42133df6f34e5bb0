/**
 * The status report, the last step of a reconcile: the status computed from what the other steps observed and
 * decided, written only when it changed (a converged instance costs no write), with an event for what a person
 * would want to know about the change (Degraded, Recovered, Ready, a rollout's progress).
 */
import {
  reconcileRequestAnnotation,
  serviceEndpoint,
  validateStatus,
  type MyAppInstanceSpec,
  type MyAppInstanceStatus,
} from "../../api/index.ts";
import { formatObjectKey, NotFoundError } from "../../kube/index.ts";
import { selectorString } from "../desired/index.ts";
import { statusEvents } from "./lifecycle-events.ts";
import type { ObservedWorkload } from "./observed.ts";
import { rolloutProgress } from "./rollout.ts";
import type { InstanceObject, Session } from "./session.ts";
import { answeringRequest, computeStatus, problemStatus, statusChanged, type Problem } from "./status.ts";
import { clippedMessage, withinStatusLimits } from "./status-limits.ts";
import { progressOnly } from "./status-pacing.ts";
import { mergeOutcomes, type StepOutcome } from "./step.ts";
import { readWithinLagGrace } from "./generation-lag.ts";

/** The built-in template's workloads as the children step left them. */
export interface ObservedChildren {
  /** The workload of the kind the spec asks for. */
  readonly workload: ObservedWorkload | undefined;
  /** The workload of the other kind, still serving while the instance moves to `workload`. */
  readonly retiring: ObservedWorkload | undefined;
}

/**
 * Writes the status of a built-in template instance from its workloads and the steps' merged outcome. With the
 * session's pacer, a status whose only news is progress waits out its interval (status-pacing.ts): the answer then
 * asks to look again when it may be written.
 */
export async function reportStatus(
  session: Session,
  spec: MyAppInstanceSpec,
  observed: ObservedChildren & StepOutcome,
): Promise<StepOutcome> {
  const { key, instance } = session;
  const { retiring } = observed;
  const previous = knownStatus(session);
  const { workload, recheckAfterMs } = readWithinLagGrace(
    session,
    observed.workload,
    spec.replicas,
    spec.image,
    previous,
  );
  const next = computeStatus(
    {
      generation: instance.metadata.generation ?? 0,
      spec,
      previous,
      selector: selectorString(key.name),
      endpoint: serviceEndpoint(key.name, key.namespace, spec.port),
      workload,
      retiring,
      step: observed.step,
      problem: observed.problem,
    },
    session.startedAt,
  );
  // A rollout's progress is news only in counts the workload controller reported for its current template.
  const countsObserved = workload !== undefined && rolloutProgress(workload, spec.replicas).observed;
  const written = await writeStatus(session, previous, next, { countsObserved, pace: true });
  return recheckAfterMs === undefined ? written : mergeOutcomes(written, { requeueAfterMs: recheckAfterMs });
}

/**
 * Writes the status when it changed, with an event for what a person would want to know about the change. With
 * `pace` and the session's pacer, a progress-only change inside its interval is not written yet: the outcome asks
 * to look again then. Every write is recorded with the pacer.
 */
export async function writeStatus(
  session: Session,
  previous: MyAppInstanceStatus | undefined,
  computed: MyAppInstanceStatus,
  { countsObserved = false, pace = false }: { readonly countsObserved?: boolean; readonly pace?: boolean } = {},
): Promise<StepOutcome> {
  const pacer = session.statusPacer;
  const requested = session.instance.metadata.annotations?.[reconcileRequestAnnotation];
  const fitted = withinStatusLimits(computed);
  const next = answeringRequest(fitted, requested, previous);
  if (!statusChanged(previous, next)) return {};
  const paceKey = formatObjectKey(session.key);
  if (pace && pacer && progressOnly(previous, next)) {
    const waitMs = pacer.waitFor(paceKey, session.clock.monotonicMs());
    if (waitMs > 0) {
      session.logger.debug({ waitMs, readyReplicas: next.readyReplicas }, "status progress paced");
      return { requeueAfterMs: waitMs };
    }
  }
  try {
    await session.cluster.applyStatus(session.key, next);
  } catch (error) {
    // Deleted while we worked: nothing left to report on.
    if (error instanceof NotFoundError) return {};
    throw error;
  }
  pacer?.wrote(paceKey, session.clock.monotonicMs(), next, session.instance.metadata.resourceVersion);
  if (fitted.message !== computed.message) {
    session.logger.info({ wholeMessage: computed.message }, "status message cut to fit the status");
  }
  session.changed(`status ${next.phase}`, { readyReplicas: next.readyReplicas, image: next.image });

  const degraded = next.conditions?.find((c) => c.type === "Degraded");
  const wasDegraded = previous?.conditions?.find((c) => c.type === "Degraded");
  if (degraded?.status === "True") {
    if (
      wasDegraded?.status !== "True" ||
      wasDegraded.reason !== degraded.reason ||
      wasDegraded.message !== degraded.message
    ) {
      await session.event("Warning", degraded.reason, "Reconcile", degraded.message);
    }
  } else if (wasDegraded?.status === "True") {
    await session.event("Normal", "Recovered", "Reconcile", `No longer degraded (was ${wasDegraded.reason})`);
  }
  // Ready, a rollout's progress and its end: once per transition, since a status is written only when it changes.
  for (const news of statusEvents(previous, next, { countsObserved })) {
    await session.event("Normal", news.reason, "Reconcile", news.note);
  }
  return {};
}

/** Reports a problem found before or instead of observing the children (keeps counts and image as they were). */
export async function writeProblem(session: Session, problem: Problem): Promise<void> {
  const previous = previousStatus(session.instance);
  const next = problemStatus(previous, session.instance.metadata.generation ?? 0, problem, session.startedAt);
  await writeStatus(session, previous, next);
}

/**
 * The status as the apiserver holds it: the one this process wrote last when the cached instance does not show that
 * write yet (status-pacing.ts), else the cached one.
 */
function knownStatus(session: Session): MyAppInstanceStatus | undefined {
  const { key, instance } = session;
  const written = session.statusPacer?.writtenOver(formatObjectKey(key), instance.metadata.resourceVersion);
  return written ?? previousStatus(instance);
}

/** The live status, or undefined when absent or malformed (then it is simply rewritten). */
export function previousStatus(instance: InstanceObject): MyAppInstanceStatus | undefined {
  if (instance.status === undefined) return undefined;
  const verdict = validateStatus(instance.status);
  return verdict.ok ? verdict.status : undefined;
}

/** True when `status` already reports `problem` (Degraded with its reason and message): no second warning. */
export function statusHasProblem(status: MyAppInstanceStatus | undefined, problem: Problem): boolean {
  const degraded = status?.conditions?.find((c) => c.type === "Degraded");
  return (
    degraded?.status === "True" &&
    degraded.reason === problem.reason &&
    degraded.message === clippedMessage(problem.message)
  );
}
