/**
 * The children step of an instance on the built-in template: apply the Service and the workload where they differ
 * from the desired state (through the storage step for a StatefulSet), and retire the workload of the other kind
 * after a move once the new one is ready. Returns the workloads as they now are, for the status report, and what
 * is wrong, under way or worth another look.
 */
import type { MyAppInstanceSpec } from "../../api/index.ts";
import { AdmissionDeniedError, type KubeObject } from "../../kube/index.ts";
import {
  desiredDeployment,
  desiredGoverningService,
  desiredService,
  governingServiceName,
  heldElsewhere,
  isControlledBy,
  isSubset,
  serviceName,
  workloadKind,
  workloadName,
  type DesiredInput,
} from "../desired/index.ts";
import { childRejection, PermanentError } from "./errors.ts";
import { changedEvent, createdEvent } from "./lifecycle-events.ts";
import { LiveListTooLarge } from "./live-lists.ts";
import type { ObservedWorkload } from "./observed.ts";
import type { ApplyConfiguration } from "./cluster-client.ts";
import { creationFailure, missingPods, rolloutProgress, type ObservedEvent } from "./rollout.ts";
import { referenceTo, type Session } from "./session.ts";
import { writeProblem, type ObservedChildren } from "./status-report.ts";
import { RecreatingWorkload } from "./status.ts";
import { mergeOutcomes, type StepOutcome } from "./step.ts";
import type { Sightings } from "./sightings.ts";
import { applyStorage, type StoragePolls } from "./storage.ts";

/** The children step's verdict, with the workloads the status report describes. */
export interface ChildrenOutcome extends StepOutcome, ObservedChildren {}

/** The workload as applied (or as found, when it could not be applied yet), and the verdict on it. */
interface WorkloadOutcome extends StepOutcome {
  readonly workload: ObservedWorkload | undefined;
}

/** How the children step waits: the storage step's polls, and since when StatefulSets have been missing pods. */
export interface ChildrenPolls extends StoragePolls {
  /** Without one (a single reconcile), missing pods are looked into at once. */
  readonly missingPodSightings?: Sightings | undefined;
}

/**
 * Applies the children, moves and grows what must change.
 *
 * @throws PermanentError when a child's name is taken by an object the instance does not control (another
 * controller's, or one with none) or the apiserver rejects a child (a 400/422, or admission's 403); the status
 * already says so.
 */
export async function reconcileChildren(
  session: Session,
  spec: MyAppInstanceSpec,
  polls: ChildrenPolls,
): Promise<ChildrenOutcome> {
  const { cluster, key, instance } = session;
  const uid = instance.metadata.uid ?? "";
  const input: DesiredInput = { metadata: { ...key, uid }, spec };
  const wanted = workloadKind(input);
  const name = workloadName(key.name);
  const [deployment, statefulSet, cachedService, cachedGoverning] = await Promise.all([
    cluster.find<ObservedWorkload>("apps/v1", "Deployment", name, key.namespace),
    cluster.find<ObservedWorkload>("apps/v1", "StatefulSet", name, key.namespace),
    cluster.find<KubeObject>("v1", "Service", serviceName(key.name), key.namespace),
    wanted === "StatefulSet"
      ? cluster.find<KubeObject>("v1", "Service", governingServiceName(key.name), key.namespace)
      : Promise.resolve(undefined),
  ]);
  const other = wanted === "Deployment" ? statefulSet : deployment;
  // The other kind is ours to retire only if we control it; a terminating one no longer serves.
  const replacing =
    other && isControlledBy(other.metadata.ownerReferences, uid) && !other.metadata.deletionTimestamp
      ? other
      : undefined;

  // No takeover: the cache holds only objects with the operator's label, so a child it does not show as this
  // instance's may exist all the same (a platform's Service named like the instance, which the tenant may not edit),
  // and a forced apply would rewrite it and make the instance its controller. Each child to write is read live
  // first unless the cache shows it as ours: a GET per child to create, none for a converged instance.
  const [live, service, governing] = await Promise.all([
    liveUnlessOurs(session, uid, wanted === "Deployment" ? deployment : statefulSet, "apps/v1", wanted, name),
    liveUnlessOurs(session, uid, cachedService, "v1", "Service", serviceName(key.name)),
    wanted === "StatefulSet"
      ? liveUnlessOurs(session, uid, cachedGoverning, "v1", "Service", governingServiceName(key.name))
      : Promise.resolve(undefined),
  ]);
  await refuseChildOwnedElsewhere(session, uid, [live, service, governing]);

  // The children this reconcile creates, told in one Created event once they are all there.
  const created: KubeObject[] = [];
  try {
    // The Service and the workload do not depend on each other: apply them at once, so a create costs one round
    // trip less (a reconcile is bound by the apiserver's latency, not by CPU).
    const serviceApplied = ensureChild(session, desiredService(input), service, { created });
    const applied = await besides(serviceApplied, () =>
      applyWorkload(session, input, { live, governing, replacing, created }, polls),
    );
    const news = createdEvent(created);
    if (news) {
      const related = created.find((child) => child.kind !== "Service") ?? created[0];
      await session.event("Normal", news.reason, "Apply", news.note, related ? referenceTo(related) : undefined);
    }
    // A step under way (a re-creation, volumes growing) comes first: the new workload is not the one to keep yet.
    const retired =
      replacing && applied.workload && !applied.step
        ? await retireReplaced(session, spec, applied.workload, replacing, polls.pollMs)
        : { retiring: replacing };
    return { workload: applied.workload, retiring: retired.retiring, ...mergeOutcomes(applied, retired) };
  } catch (caught) {
    // A 400/422, or admission's 403 (a policy, a webhook, a quota): not retried until the instance changes.
    const error = childRejection(caught);
    if (!error) throw caught;
    // A same-named object of someone else's made since the live look above, which the apiserver refused to give a
    // second controller: read the children live to say whose it is.
    const liveChildren = await Promise.all([
      cluster.find<KubeObject>("apps/v1", wanted, name, key.namespace, { live: true }),
      cluster.find<KubeObject>("v1", "Service", serviceName(key.name), key.namespace, { live: true }),
      wanted === "StatefulSet"
        ? cluster.find<KubeObject>("v1", "Service", governingServiceName(key.name), key.namespace, { live: true })
        : Promise.resolve(undefined),
    ]);
    await refuseChildOwnedElsewhere(session, uid, liveChildren);
    const rejected = {
      reason: "ChildRejected",
      message: `the apiserver rejected a child of this instance: ${error.message}`,
    };
    await writeProblem(session, rejected);
    // A policy, webhook or quota may be lifted without the instance changing; a schema's 400/422 may not.
    throw new PermanentError(rejected.message, {
      reason: rejected.reason,
      cause: error,
      outsideSpec: error instanceof AdmissionDeniedError,
    });
  }
}

/** Applies the workload of the kind the spec asks for (a StatefulSet through the storage step). */
async function applyWorkload(
  session: Session,
  input: DesiredInput,
  children: {
    readonly live: ObservedWorkload | undefined;
    readonly governing: KubeObject | undefined;
    readonly replacing: ObservedWorkload | undefined;
    readonly created: KubeObject[];
  },
  polls: ChildrenPolls,
): Promise<WorkloadOutcome> {
  const { live, governing, replacing, created } = children;
  const wanted = workloadKind(input);
  if (live?.metadata.deletionTimestamp) {
    // Our own Orphan deletion of a StatefulSet (or someone's deletion) is still in flight: apply once it is gone.
    return {
      workload: live,
      step: { reason: RecreatingWorkload, message: `waiting for the old ${wanted} to be gone before re-creating it` },
      requeueAfterMs: polls.pollMs,
    };
  }
  if (wanted === "Deployment") {
    return { workload: await ensureChild(session, desiredDeployment(input), live, { created, replacing }) };
  }
  const governingApplied = ensureChild(session, desiredGoverningService(input), governing, { created });
  const statefulSet = () => applyStatefulSet(session, input, live, { created, replacing }, polls);
  // The governing Service before a StatefulSet that exists: one re-created to adopt it must find it there. A new
  // StatefulSet needs it only for its pods' DNS names, not to start: both at once, a round trip less per create.
  if (live) {
    await governingApplied;
    return await statefulSet();
  }
  return await besides(governingApplied, statefulSet);
}

/** The storage step, then the StatefulSet it settles on, and how its pods are doing. */
async function applyStatefulSet(
  session: Session,
  input: DesiredInput,
  live: ObservedWorkload | undefined,
  children: { readonly replacing: ObservedWorkload | undefined; readonly created: KubeObject[] },
  polls: ChildrenPolls,
): Promise<WorkloadOutcome> {
  const storage = await applyStorage(session, input, live, polls);
  if (!storage.apply) return { workload: live, ...mergeOutcomes(storage) };
  const workload = await ensureChild(session, storage.apply, live, children);
  const pods = storage.problem ? {} : await podsOutcome(session, workload, input.spec.replicas, polls);
  const settled = mergeOutcomes(storage, pods);
  // Growing volumes is news only when nothing is wrong: a problem is what the instance must report.
  return { workload, ...(settled.problem ? settled : mergeOutcomes(settled, storage.growth)) };
}

/**
 * Deletes the workload of the other kind once the new one is rolled out with spec.image; until then, looks again
 * soon (the operator's own next action is what it waits for).
 */
async function retireReplaced(
  session: Session,
  spec: MyAppInstanceSpec,
  workload: ObservedWorkload,
  retiring: ObservedWorkload,
  pollMs: number,
): Promise<StepOutcome & { readonly retiring: ObservedWorkload | undefined }> {
  const progress = rolloutProgress(workload, spec.replicas);
  if (!progress.complete || progress.image !== spec.image) return { retiring, requeueAfterMs: pollMs };
  await session.cluster.delete("apps/v1", retiring.kind, workloadName(session.key.name), session.key.namespace, {
    propagationPolicy: "Background",
    ...(retiring.metadata.uid ? { preconditionUid: retiring.metadata.uid } : {}),
  });
  await session.event(
    "Normal",
    "Migrated",
    "Delete",
    `The ${workload.kind} is ready with ${progress.ready}/${spec.replicas} replicas; deleted the ${retiring.kind} it replaces`,
    referenceTo(retiring),
  );
  session.logger.info({ from: retiring.kind, to: workload.kind }, "moved to the new workload kind");
  return { retiring: undefined };
}

/**
 * How soon a StatefulSet's Events are read again after they were too large to read (`EventsTooLarge`): each read
 * costs up to its budget (live-lists.ts), so not every few seconds.
 */
export const unreadableEventsPollMs = 300_000;

/**
 * A StatefulSet that cannot create its pods says so only in events (`FailedCreate`), unlike a Deployment's
 * ReplicaFailure condition. Once pods have been missing for a poll interval (sightings.ts: a moment of a
 * rollout costs no read), read its create events: the newest failure is the problem, with the apiserver's
 * message; either way look again soon, since a failure changes nothing the operator watches. A StatefulSet with
 * all its pods costs no read. Events past their read budget (someone's, megabytes each) are a problem of their own,
 * `EventsTooLarge`, looked at again after {@link unreadableEventsPollMs}.
 */
async function podsOutcome(
  session: Session,
  workload: ObservedWorkload,
  replicas: number,
  { pollMs, missingPodSightings: sightings }: ChildrenPolls,
): Promise<StepOutcome> {
  const uid = workload.metadata.uid;
  if (!uid) return {};
  if (!missingPods(workload, replicas)) {
    sightings?.passed(uid);
    return {};
  }
  const missingMs = sightings ? sightings.seenFor(uid, session.clock.monotonicMs()) : pollMs;
  if (missingMs < pollMs) return { requeueAfterMs: pollMs - missingMs };
  let events: ObservedEvent[];
  try {
    events = await session.cluster.list<ObservedEvent>(
      "v1",
      "Event",
      session.key.namespace,
      "",
      `involvedObject.uid=${uid}`,
    );
  } catch (error) {
    if (!(error instanceof LiveListTooLarge)) throw error;
    // Events no controller writes (megabytes each): someone made them, and reading them again every few seconds
    // would cost the apiserver what they weigh each time. Said once, looked at again slowly.
    return {
      problem: {
        reason: "EventsTooLarge",
        message:
          `pods are missing, and the Events that would say why cannot be read: ${error.message}; ` +
          `kubectl get events -n ${session.key.namespace} --field-selector involvedObject.uid=${uid} lists them`,
      },
      requeueAfterMs: unreadableEventsPollMs,
    };
  }
  const failure = creationFailure(events);
  if (!failure) return { requeueAfterMs: pollMs };
  return {
    problem: { reason: failure.reason, message: `pods cannot be created: ${failure.message}` },
    requeueAfterMs: pollMs,
  };
}

/**
 * Runs `main` while `side` (already started) is in flight, and returns once both have settled, so no write of this
 * reconcile is still in flight when it ends; `main`'s error wins over `side`'s.
 */
async function besides<T>(side: Promise<unknown>, main: () => Promise<T>): Promise<T> {
  const [sideResult, mainResult] = await Promise.allSettled([side, main()]);
  if (mainResult.status === "rejected") throw mainResult.reason;
  if (sideResult.status === "rejected") throw sideResult.reason;
  return mainResult.value;
}

/**
 * Applies `desired` unless the live object already holds every field of it; returns the object as it now is.
 * `replacing` is the workload of the other kind when this apply starts a move; a child created otherwise is added
 * to `created` (the caller tells them in one event), a child changed gets its own `Scaled` or `Updated` event
 * (none for a new image alone: the rollout's events tell it).
 */
async function ensureChild<T extends KubeObject>(
  session: Session,
  desired: ApplyConfiguration,
  live: T | undefined,
  { created, replacing }: { readonly created: KubeObject[]; readonly replacing?: KubeObject | undefined },
): Promise<T> {
  if (live && isSubset(desired, live)) return live;
  const applied = await session.cluster.apply<T>(desired);
  const what = `${desired.kind} ${desired.metadata.name}`;
  if (live) {
    const change = changedEvent(desired as unknown as KubeObject, live);
    if (change) await session.event("Normal", change.reason, "Apply", change.note, referenceTo(applied));
  } else if (replacing) {
    await session.event(
      "Normal",
      "Migrating",
      "Apply",
      `Created ${what} to replace ${replacing.kind} ${replacing.metadata.name}, which keeps serving until it is ready`,
      referenceTo(applied),
    );
  } else {
    created.push(applied);
  }
  session.changed(`${desired.kind}/${desired.metadata.name} ${live ? "updated" : "created"}`);
  return applied;
}

/**
 * The child as the cache has it when the cache shows it controlled by the instance `uid`, else as the apiserver has
 * it (a live GET): absent, the instance's after all (the cache missed it: its label removed, say), or not ours.
 */
async function liveUnlessOurs<T extends KubeObject>(
  session: Session,
  uid: string,
  cached: T | undefined,
  apiVersion: string,
  kind: string,
  name: string,
): Promise<T | undefined> {
  if (cached && isControlledBy(cached.metadata.ownerReferences, uid)) return cached;
  return session.cluster.find<T>(apiVersion, kind, name, session.key.namespace, { live: true });
}

/**
 * A child of this name that the instance does not control, whether another object controls it or none does, is not
 * ours to take: Degraded, ChildOwnedElsewhere.
 */
async function refuseChildOwnedElsewhere(
  session: Session,
  uid: string,
  children: readonly (KubeObject | undefined)[],
): Promise<void> {
  for (const child of children) {
    const held = child && heldElsewhere(child.metadata.ownerReferences, uid);
    if (!child || !held) continue;
    const problem = {
      reason: "ChildOwnedElsewhere",
      message:
        `${child.kind} ${session.key.namespace}/${child.metadata.name} already exists and is ${held}; delete it ` +
        "or give the instance another name",
    };
    await writeProblem(session, problem);
    // Whoever holds it may delete it; the cache holds only our objects, so no event would say so.
    throw new PermanentError(problem.message, { reason: problem.reason, outsideSpec: true });
  }
}
