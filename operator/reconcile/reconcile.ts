/**
 * One reconcile of one MyAppInstance key: level-based (it reads everything it needs and never trusts the event
 * that woke it), idempotent, and silent when nothing changed: a converged instance costs reads only, no writes.
 *
 * Order: instance gone → done; being deleted → finalize; ensure the finalizer; validate the spec (invalid → a
 * Degraded status, no retry); with a chart, the chart branch (chart.ts); else refuse a switch away from a chart
 * that would lose volumes; apply the Service and the workload where they differ from the desired state; grow
 * volumes and re-create a StatefulSet whose claim template must change; check that volumes still to be
 * provisioned have a StorageClass; retire the old workload after a move once the new one is ready; write the
 * status if it changed; prune what a chart rendered that the built-in template does not make.
 */
import type { Logger } from "pino";
import {
  apiVersion,
  finalizer,
  kind,
  reconcileRequestAnnotation,
  serviceEndpoint,
  TransientFailure,
  validateSpec,
  validateStatus,
  type MyAppInstanceSpec,
  type MyAppInstanceStatus,
} from "../../api/index.ts";
import { ConflictError, NotFoundError, type KubeObject } from "../../kube/index.ts";
import { parseObjectKey as parseKey } from "../../kube/object-key.ts";
import {
  desiredDeployment,
  desiredGoverningService,
  desiredService,
  governingServiceName,
  isControlledBy,
  selectorString,
  serviceName,
  workloadKind,
  workloadName,
  type DesiredInput,
} from "../desired/index.ts";
import { reconcileChart, type ChartDeps } from "./chart.ts";
import { planTemplateSwitch, pruneChartLeftovers } from "./chart-switch.ts";
import { isSubset } from "./compare.ts";
import { childRejection, isTransientFailure, PermanentError, TransientError } from "./errors.ts";
import { finalizeInstance } from "./finalize.ts";
import { changedEvent, createdEvent, statusEvents } from "./lifecycle-events.ts";
import type { ObservedClaim, ObservedStorageClass, ObservedWorkload } from "./observed.ts";
import type { ApplyConfiguration, ClusterPort, ObjectKey } from "./port.ts";
import { creationFailure, missingPods, rolloutProgress, type ObservedEvent } from "./rollout.ts";
import { openSession, referenceTo, type InstanceObject, type Session } from "./session.ts";
import {
  answeringRequest,
  computeStatus,
  problemStatus,
  RecreatingWorkload,
  stalledStatus,
  statusChanged,
  type Problem,
  type Step,
} from "./status.ts";
import {
  claimsSmallerThan,
  dataClaims,
  planStatefulSet,
  storageClassProblem,
  unboundClaimsByClass,
  volumeGrowth,
} from "./storage.ts";

export interface ReconcileDeps {
  readonly port: ClusterPort;
  readonly logger: Logger;
  /** @default () => new Date() */
  readonly now?: () => Date;
  /**
   * How soon to look again while waiting for a step that needs the operator's next action (deleting the old
   * workload once the new one is ready, applying a StatefulSet once its predecessor is gone). The children's
   * watch events normally come first; this is the safety net for a missed or late event.
   * @default 5000
   */
  readonly pollIntervalMs?: number;
  /**
   * How soon to look again while volume claims wait for a StorageClass that does not exist (or for a default
   * class). The operator does not watch StorageClasses, and a created class changes nothing it watches until the
   * claims are provisioned, so this slow poll is what notices the fix: the instance recovers by itself within
   * about this long. Each look is reads only.
   * @default 30000
   */
  readonly storageClassPollMs?: number;
  /** Rendering for instances with spec.chart (operator/chart); without it such instances are Degraded. */
  readonly chart?: ChartDeps;
}

/** What a reconcile asks of the runtime next; `{ writes }` alone means "converged: wait for a change". */
export interface ReconcileOutcome {
  readonly requeueAfterMs?: number;
  /** API writes this reconcile made (0 for a converged instance). */
  readonly writes: number;
}

/** The reconciler in the runtime's shape: `(key) => outcome`. */
export function reconciler(deps: ReconcileDeps): (key: string) => Promise<ReconcileOutcome> {
  return (key) => reconcile(key, deps);
}

/**
 * Reconciles the instance `key` ("namespace/name").
 *
 * @throws PermanentError when retrying cannot help until the instance changes (already reported on its status).
 * @throws ConflictError (kube) on a 409, unwrapped, so the runtime retries promptly with a fresh read.
 * @throws TransientError for anything else, with the original error as `cause`: retry with backoff.
 */
export async function reconcile(key: string, deps: ReconcileDeps): Promise<ReconcileOutcome> {
  const objectKey = parseKey(key);
  const logger = deps.logger.child({ key });
  try {
    return await reconcileKey(objectKey, deps, logger);
  } catch (error) {
    if (error instanceof PermanentError || error instanceof TransientError || error instanceof ConflictError) {
      throw error;
    }
    const detail = error instanceof Error ? error.message : String(error);
    throw new TransientError(`reconcile ${key}: ${detail}`, { cause: error });
  }
}

/**
 * Records on the instance that its reconcile keeps failing (the runtime's onStalled hook, called once the fast
 * retries are used up and then after every slow retry that fails too). A transient cause (the apiserver down or
 * throttling, 401/403 while credentials or RBAC roll out, conflicts) sets only Stalled=True, reason
 * TransientFailure: waits keep waiting and the instance never turns Degraded for it. Any other cause sets
 * Degraded and Stalled, reason ReconcileFailing. Either way the runtime keeps retrying every `retryIntervalMs`,
 * and the first success clears Stalled. Idempotent: the same error again writes nothing.
 */
export async function recordStalled(
  key: string,
  error: unknown,
  deps: ReconcileDeps,
  retryIntervalMs = 300_000,
): Promise<void> {
  const objectKey = parseKey(key);
  const instance = await deps.port.find<InstanceObject>(apiVersion, kind, objectKey.name, objectKey.namespace);
  if (!instance || instance.metadata.deletionTimestamp) return;
  const session = openSession(deps.port, objectKey, instance, deps.logger.child({ key }), (deps.now ?? now)());
  const detail = error instanceof Error ? error.message : String(error);
  const retry = `retrying about every ${formatInterval(retryIntervalMs)}, and at once on a change`;
  if (isTransientFailure(error)) {
    const previous = previousStatus(instance);
    const problem = {
      reason: TransientFailure,
      message: `the operator keeps failing to reconcile this instance for a transient cause; ${retry}: ${detail}`,
    };
    const next = stalledStatus(previous, instance.metadata.generation ?? 0, problem, session.now);
    await writeStatus(session, previous, next);
    return;
  }
  const problem = {
    reason: "ReconcileFailing",
    message: `the operator keeps failing to reconcile this instance; ${retry}: ${detail}`,
  };
  await writeProblem(session, problem);
}

/** `300000` → "5m", `90000` → "90s". */
function formatInterval(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 60 && seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;
}

async function reconcileKey(key: ObjectKey, deps: ReconcileDeps, logger: Logger): Promise<ReconcileOutcome> {
  const instance = await deps.port.find<InstanceObject>(apiVersion, kind, key.name, key.namespace);
  if (!instance) {
    logger.debug({}, "instance is gone");
    return { writes: 0 };
  }
  const session = openSession(deps.port, key, instance, logger, (deps.now ?? now)());
  try {
    return await reconcileInstance(session, deps);
  } catch (error) {
    // A write that found the instance (or its namespace) gone: deleted while we worked, which is expected, not a
    // failure to retry and warn about. The cache tells (its watch delivers the deletion within moments); a live read
    // would need a `get` verb the operator's RBAC does not grant and otherwise never uses.
    if (!(error instanceof NotFoundError)) throw error;
    const cached = await deps.port.find<InstanceObject>(apiVersion, kind, key.name, key.namespace);
    if (cached && !cached.metadata.deletionTimestamp && cached.metadata.uid === instance.metadata.uid) throw error;
    logger.debug({ error: error.message, writes: session.writes() }, "instance deleted while it was reconciled");
    return { writes: session.writes() };
  }
}

async function reconcileInstance(session: Session, deps: ReconcileDeps): Promise<ReconcileOutcome> {
  const { instance } = session;
  if (instance.metadata.deletionTimestamp) {
    await finalizeInstance(session);
    return { writes: session.writes() };
  }
  await ensureFinalizer(session);

  const verdict = validateSpec(instance.spec);
  if (!verdict.ok) {
    const issues = verdict.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
    // Permanent, but not an error for the runtime: the status says what to fix and a spec change wakes us up.
    await writeProblem(session, { reason: "InvalidSpec", message: `the spec is invalid: ${issues}` });
    return { writes: session.writes() };
  }
  const chart = verdict.spec.chart ?? deps.chart?.defaultChart;
  if (chart) {
    const previous = previousStatus(instance);
    const outcome = await reconcileChart(session, { ...verdict.spec, chart }, previous, deps.chart);
    if (outcome.status) await writeStatus(session, previous, outcome.status);
    if (outcome.failure) throw outcome.failure;
    return { ...(outcome.requeueAfterMs ? { requeueAfterMs: outcome.requeueAfterMs } : {}), writes: session.writes() };
  }
  // Objects a chart rendered before spec.chart was removed: checked against the storage rules first, pruned once
  // the built-in children are applied (so the app keeps serving through the switch).
  const leaving = await planTemplateSwitch(session, verdict.spec, deps.chart?.allowedKinds);
  if (!leaving.ok) {
    session.logger.warn({ reason: leaving.refusal.reason }, leaving.refusal.message);
    await writeProblem(session, leaving.refusal);
    throw new PermanentError(leaving.refusal.message, { reason: leaving.refusal.reason });
  }
  const requeueAfterMs = await reconcileChildren(session, verdict.spec, {
    pollMs: deps.pollIntervalMs ?? 5000,
    storageClassPollMs: deps.storageClassPollMs ?? 30_000,
  });
  await pruneChartLeftovers(session, leaving.prune);
  return { ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}), writes: session.writes() };
}

async function ensureFinalizer(session: Session): Promise<void> {
  const { metadata } = session.instance;
  const finalizers = metadata.finalizers ?? [];
  if (finalizers.includes(finalizer)) return;
  await session.port.setFinalizers({ ...session.key, resourceVersion: metadata.resourceVersion ?? "" }, [
    ...finalizers,
    finalizer,
  ]);
  session.logger.info({ finalizer }, "added finalizer");
}

/** Applies the children, moves and grows what must change; returns a requeue delay while a step is waiting. */
async function reconcileChildren(
  session: Session,
  spec: MyAppInstanceSpec,
  { pollMs, storageClassPollMs }: { readonly pollMs: number; readonly storageClassPollMs: number },
): Promise<number | undefined> {
  const { port, key, instance } = session;
  const uid = instance.metadata.uid ?? "";
  const input: DesiredInput = { metadata: { ...key, uid }, spec };
  const wanted = workloadKind(input);
  const name = workloadName(key.name);
  const [deployment, statefulSet, service, governing] = await Promise.all([
    port.find<ObservedWorkload>("apps/v1", "Deployment", name, key.namespace),
    port.find<ObservedWorkload>("apps/v1", "StatefulSet", name, key.namespace),
    port.find<KubeObject>("v1", "Service", serviceName(key.name), key.namespace),
    wanted === "StatefulSet"
      ? port.find<KubeObject>("v1", "Service", governingServiceName(key.name), key.namespace)
      : Promise.resolve(undefined),
  ]);
  let workload = wanted === "Deployment" ? deployment : statefulSet;
  const other = wanted === "Deployment" ? statefulSet : deployment;
  // The other kind is ours to retire only if we control it; a terminating one no longer serves.
  let retiring =
    other && isControlledBy(other.metadata.ownerReferences, uid) && !other.metadata.deletionTimestamp
      ? other
      : undefined;

  await refuseChildOwnedElsewhere(session, uid, [workload, service, governing]);

  let problem: Problem | undefined;
  let step: Step | undefined;
  let requeueAfterMs: number | undefined;
  const previous = previousStatus(instance);
  // The children this reconcile creates, told in one Created event once they are all there.
  const created: KubeObject[] = [];
  try {
    // The Service and the workload do not depend on each other: apply them at once, so a create costs one round
    // trip less (a reconcile is bound by the apiserver's latency, not by CPU).
    const serviceApplied = ensureChild(session, desiredService(input), service, { created });
    await besides(serviceApplied, async () => {
      if (workload?.metadata.deletionTimestamp) {
        // Our own Orphan deletion of a StatefulSet (or someone's deletion) is still in flight: apply once it is gone.
        step = {
          reason: RecreatingWorkload,
          message: `waiting for the old ${wanted} to be gone before re-creating it`,
        };
        requeueAfterMs = pollMs;
      } else if (wanted === "StatefulSet") {
        // The governing Service first: a StatefulSet re-created to adopt it finds it there.
        await ensureChild(session, desiredGoverningService(input), governing, { created });
        const planned = await reconcileStorage(session, input, workload);
        problem = planned.problem;
        if (planned.recreated) {
          step = {
            reason: RecreatingWorkload,
            message: `re-creating the StatefulSet with ${planned.recreateReason ?? "a new template"}; its pods keep running`,
          };
          requeueAfterMs = pollMs;
        } else {
          workload = await ensureChild(session, planned.desired, workload, { created, replacing: retiring });
          const stuck = problem ? undefined : await statefulSetProblem(session, workload, spec.replicas);
          problem = stuck?.problem ?? problem;
          if (stuck?.pending) requeueAfterMs = Math.min(pollMs, requeueAfterMs ?? pollMs);
          if (!problem && planned.growth) {
            if ("problem" in planned.growth) problem = planned.growth.problem;
            else {
              step = planned.growth.step;
              requeueAfterMs = Math.min(pollMs, requeueAfterMs ?? pollMs);
            }
          }
        }
        if (planned.awaitingStorageClass) requeueAfterMs = storageClassPollMs;
      } else {
        workload = await ensureChild(session, desiredDeployment(input), workload, { created, replacing: retiring });
      }
    });
    const news = createdEvent(created);
    if (news) {
      const related = created.find((child) => child.kind !== "Service") ?? created[0];
      await session.event("Normal", news.reason, "Apply", news.note, related ? referenceTo(related) : undefined);
    }

    if (retiring && workload && !step) {
      const progress = rolloutProgress(workload, spec.replicas);
      if (progress.complete && progress.image === spec.image) {
        await port.delete("apps/v1", retiring.kind, name, key.namespace, {
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
        retiring = undefined;
      } else {
        requeueAfterMs = Math.min(pollMs, requeueAfterMs ?? pollMs);
      }
    }
  } catch (caught) {
    // A 400/422, or admission's 403 (a policy, a webhook, a quota): not retried until the instance changes.
    const error = childRejection(caught);
    if (!error) throw caught;
    // The cache holds only objects with our label, so a same-named object of someone else's was invisible until the
    // apiserver refused to give it a second controller: read the children live to say whose it is.
    const live = await Promise.all([
      port.find<KubeObject>("apps/v1", wanted, name, key.namespace, { live: true }),
      port.find<KubeObject>("v1", "Service", serviceName(key.name), key.namespace, { live: true }),
      wanted === "StatefulSet"
        ? port.find<KubeObject>("v1", "Service", governingServiceName(key.name), key.namespace, { live: true })
        : Promise.resolve(undefined),
    ]);
    await refuseChildOwnedElsewhere(session, uid, live);
    const rejected = {
      reason: "ChildRejected",
      message: `the apiserver rejected a child of this instance: ${error.message}`,
    };
    await writeProblem(session, rejected);
    throw new PermanentError(rejected.message, { reason: rejected.reason, cause: error });
  }

  const next = computeStatus(
    {
      generation: instance.metadata.generation ?? 0,
      spec,
      previous,
      selector: selectorString(key.name),
      endpoint: serviceEndpoint(key.name, key.namespace, spec.port),
      workload,
      retiring,
      step,
      problem,
    },
    session.now,
  );
  // A rollout's progress is news only in counts the workload controller reported for its current template.
  const countsObserved = workload !== undefined && rolloutProgress(workload, spec.replicas).observed;
  await writeStatus(session, previous, next, { countsObserved });
  return requeueAfterMs;
}

/**
 * Claims and StatefulSet for an instance with storage: grows claims that are too small (where their class
 * allows), and deletes the StatefulSet with Orphan when its claim template must grow. Returns what to apply when
 * it did not delete, and a problem when the volumes cannot change or cannot be provisioned at all
 * (`awaitingStorageClass`: their StorageClass is missing, which nothing the operator watches will announce).
 */
async function reconcileStorage(
  session: Session,
  input: DesiredInput,
  live: ObservedWorkload | undefined,
): Promise<{
  desired: ReturnType<typeof planStatefulSet>["desired"];
  recreated: boolean;
  recreateReason: string | undefined;
  problem: Problem | undefined;
  awaitingStorageClass: boolean;
  growth: ReturnType<typeof volumeGrowth>;
}> {
  const { port, key } = session;
  const name = workloadName(key.name);
  const storage = input.spec.storage ?? "";
  const claims = dataClaims(
    await port.list<ObservedClaim>("v1", "PersistentVolumeClaim", key.namespace, selectorString(key.name)),
    name,
  );
  const classNames = new Set(claimsSmallerThan(claims, storage).map((claim) => claim.spec?.storageClassName ?? ""));
  const classes = new Map<string, ObservedStorageClass | undefined>();
  for (const className of classNames) {
    classes.set(
      className,
      className === ""
        ? undefined
        : await port.find<ObservedStorageClass>("storage.k8s.io/v1", "StorageClass", className),
    );
  }
  const plan = planStatefulSet(input, live, claims, classes);

  // Each claim is grown on its own; a failure part-way is transient: the claims already grown stay so, the rest
  // are grown on the retry (they are still smaller than the spec), and nothing is re-created meanwhile.
  const failed: string[] = [];
  for (const claim of plan.expand) {
    const claimName = claim.metadata.name ?? "";
    const expansion: ApplyConfiguration & { spec: unknown } = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: claimName, namespace: key.namespace },
      spec: { resources: { requests: { storage } } },
    };
    try {
      await port.apply(expansion);
    } catch (error) {
      failed.push(`${claimName}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const was = claim.spec?.resources?.requests?.storage ?? "?";
    await session.event(
      "Normal",
      "ExpandingVolume",
      "Apply",
      `Requested ${storage} for claim ${claimName} (was ${was})`,
      referenceTo(claim),
    );
    session.logger.info({ claim: claimName, from: was, to: storage }, "requested volume expansion");
  }

  if (failed.length > 0) {
    const grown = plan.expand.length - failed.length;
    throw new TransientError(
      `grew ${grown} of ${plan.expand.length} volume claims to ${storage}; retrying the rest: ${failed.join("; ")}`,
    );
  }

  if (plan.recreate && live) {
    // The claim template is immutable: delete the StatefulSet but not its pods (they are adopted by the new one).
    await port.delete("apps/v1", "StatefulSet", name, key.namespace, {
      propagationPolicy: "Orphan",
      ...(live.metadata.uid ? { preconditionUid: live.metadata.uid } : {}),
    });
    await session.event(
      "Normal",
      "RecreatingStatefulSet",
      "Delete",
      `Deleted StatefulSet ${name} without its pods to give it ${plan.recreateReason ?? "a new template"}; it is re-created next`,
      referenceTo(live),
    );
    session.logger.info(
      { statefulSet: name, storage, because: plan.recreateReason },
      "deleted StatefulSet (orphaning pods) to re-create it",
    );
  }
  const recreated = plan.recreate && live !== undefined;
  // Only claims that are not Bound need a class, so a running instance makes no StorageClass read here.
  const classProblem =
    plan.problem || recreated ? undefined : await provisioningProblem(port, unboundClaimsByClass(plan.desired, claims));
  const problem = plan.problem ?? classProblem;
  if (problem && !statusHasProblem(previousStatus(session.instance), problem)) {
    session.logger.warn({ reason: problem.reason }, problem.message);
  }
  return {
    desired: plan.desired,
    recreated,
    recreateReason: plan.recreateReason,
    problem,
    awaitingStorageClass: classProblem !== undefined,
    growth: volumeGrowth(claims, storage, { name, replicas: input.spec.replicas }),
  };
}

/**
 * A StatefulSet that cannot create its pods says so only in events (`FailedCreate`), unlike a Deployment's
 * ReplicaFailure condition. While pods are missing, read its create events: the newest failure is the problem,
 * with the apiserver's message; without one, look again soon (`pending`), since a failure changes nothing the
 * operator watches. A StatefulSet with all its pods costs no read.
 */
async function statefulSetProblem(
  session: Session,
  workload: ObservedWorkload,
  replicas: number,
): Promise<{ problem?: Problem; pending: boolean } | undefined> {
  const uid = workload.metadata.uid;
  if (!uid || !missingPods(workload, replicas)) return undefined;
  const events = await session.port.list<ObservedEvent>(
    "v1",
    "Event",
    session.key.namespace,
    "",
    `involvedObject.uid=${uid}`,
  );
  const failure = creationFailure(events);
  if (!failure) return { pending: true };
  return { problem: { reason: failure.reason, message: `pods cannot be created: ${failure.message}` }, pending: true };
}

/**
 * Looks up the StorageClasses that the unbound claims in `waiting` need: by name, or all of them when some claims
 * need the default class (nothing but a list finds the default). No read when nothing waits.
 */
async function provisioningProblem(
  port: ClusterPort,
  waiting: ReadonlyMap<string | undefined, readonly string[]>,
): Promise<Problem | undefined> {
  if (waiting.size === 0) return undefined;
  let classes: ObservedStorageClass[];
  if (waiting.has(undefined)) {
    // StorageClasses are cluster-scoped: no namespace lists them all.
    classes = await port.list<ObservedStorageClass>("storage.k8s.io/v1", "StorageClass", "", "");
  } else {
    const names = [...waiting.keys()].filter((name) => name !== undefined);
    const found = await Promise.all(
      names.map((name) => port.find<ObservedStorageClass>("storage.k8s.io/v1", "StorageClass", name)),
    );
    classes = found.filter((storageClass) => storageClass !== undefined);
  }
  return storageClassProblem(waiting, classes);
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
 * to `created` (the caller tells them in one event), a child changed gets its own `Scaled` or `Updated` event.
 */
async function ensureChild<T extends KubeObject>(
  session: Session,
  desired: ApplyConfiguration,
  live: T | undefined,
  { created, replacing }: { readonly created: KubeObject[]; readonly replacing?: KubeObject | undefined },
): Promise<T> {
  if (live && isSubset(desired, live)) return live;
  const applied = await session.port.apply<T>(desired);
  const what = `${desired.kind} ${desired.metadata.name}`;
  if (live) {
    const change = changedEvent(desired as unknown as KubeObject, live);
    await session.event("Normal", change.reason, "Apply", change.note, referenceTo(applied));
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
  session.logger.info({ kind: desired.kind, name: desired.metadata.name, created: !live }, "applied child");
  return applied;
}

/** Writes the status when it changed, with an event for what a person would want to know about the change. */
async function writeStatus(
  session: Session,
  previous: MyAppInstanceStatus | undefined,
  computed: MyAppInstanceStatus,
  { countsObserved = false }: { readonly countsObserved?: boolean } = {},
): Promise<void> {
  const requested = session.instance.metadata.annotations?.[reconcileRequestAnnotation];
  const next = answeringRequest(computed, requested, previous);
  if (!statusChanged(previous, next)) return;
  try {
    await session.port.applyStatus(session.key, next);
  } catch (error) {
    // Deleted while we worked: nothing left to report on.
    if (error instanceof NotFoundError) return;
    throw error;
  }
  session.logger.info({ phase: next.phase, readyReplicas: next.readyReplicas, image: next.image }, "status updated");

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
}

/** Reports a problem found before or instead of observing the children (keeps counts and image as they were). */
async function writeProblem(session: Session, problem: Problem): Promise<void> {
  const previous = previousStatus(session.instance);
  const next = problemStatus(previous, session.instance.metadata.generation ?? 0, problem, session.now);
  await writeStatus(session, previous, next);
}

/** The live status, or undefined when absent or malformed (then it is simply rewritten). */
function previousStatus(instance: InstanceObject): MyAppInstanceStatus | undefined {
  if (instance.status === undefined) return undefined;
  const verdict = validateStatus(instance.status);
  return verdict.ok ? verdict.status : undefined;
}

function statusHasProblem(status: MyAppInstanceStatus | undefined, problem: Problem): boolean {
  const degraded = status?.conditions?.find((c) => c.type === "Degraded");
  return degraded?.status === "True" && degraded.reason === problem.reason && degraded.message === problem.message;
}

function hasController(object: KubeObject): boolean {
  return (object.metadata.ownerReferences ?? []).some((reference) => reference.controller === true);
}

function now(): Date {
  return new Date();
}

/** A child of this name controlled by another object is not ours to take: Degraded, ChildOwnedElsewhere. */
async function refuseChildOwnedElsewhere(
  session: Session,
  uid: string,
  children: readonly (KubeObject | undefined)[],
): Promise<void> {
  const taken = children.find(
    (child) => child !== undefined && hasController(child) && !isControlledBy(child.metadata.ownerReferences, uid),
  );
  if (!taken) return;
  const owner = taken.metadata.ownerReferences?.find((reference) => reference.controller === true);
  const problem = {
    reason: "ChildOwnedElsewhere",
    message:
      `${taken.kind} ${session.key.namespace}/${taken.metadata.name} already exists and is controlled by ` +
      `${owner?.kind ?? "another object"} ${owner?.name ?? ""}; delete it or give the instance another name`,
  };
  await writeProblem(session, problem);
  throw new PermanentError(problem.message, { reason: problem.reason });
}
