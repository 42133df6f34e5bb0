/**
 * The storage step of an instance with spec.storage: reads its data claims (and the StorageClasses that decide
 * whether they can grow or be provisioned), asks the pure plan (storage-plan.ts) what to do, and does it: grows
 * the claims that are too small, and deletes the StatefulSet with Orphan when its immutable claim template or
 * serviceName must change. The children step applies the StatefulSet this returns.
 */
import { selectorString, workloadName, type DesiredInput, type DesiredStatefulSet } from "../desired/index.ts";
import { TransientError } from "./errors.ts";
import type { ObservedClaim, ObservedStorageClass, ObservedWorkload } from "./observed.ts";
import type { ApplyConfiguration, ClusterClient } from "./cluster-client.ts";
import { referenceTo, type Session } from "./session.ts";
import { previousStatus, statusHasProblem } from "./status-report.ts";
import { RecreatingWorkload, type Problem } from "./status.ts";
import type { StepOutcome } from "./step.ts";
import {
  claimsSmallerThan,
  dataClaims,
  planStatefulSet,
  storageClassProblem,
  unboundClaimsByClass,
  volumeGrowth,
  type VolumeGrowth,
  type WaitingClaims,
} from "./storage-plan.ts";

/** How soon to look again while storage waits (see ReconcileDeps.pollIntervalMs and storageClassPollMs). */
export interface StoragePolls {
  readonly pollMs: number;
  readonly storageClassPollMs: number;
}

/**
 * The storage step's verdict: a problem when the volumes cannot change or cannot be provisioned (then a slow
 * requeue while a StorageClass is missing, which nothing the operator watches will announce), or the step
 * RecreatingWorkload while the StatefulSet it deleted goes away.
 */
export interface StorageOutcome extends StepOutcome {
  /** The StatefulSet to apply; absent when it was just deleted (its pods orphaned) to be re-created. */
  readonly apply?: DesiredStatefulSet;
  /** How far growing the claims has come: the instance's step or problem when nothing else is wrong. */
  readonly growth: StepOutcome;
}

/**
 * Grows claims that are too small (where their class allows), and deletes the StatefulSet with Orphan when its
 * claim template must change; returns what to apply when it did not delete.
 */
export async function applyStorage(
  session: Session,
  input: DesiredInput,
  live: ObservedWorkload | undefined,
  { pollMs, storageClassPollMs }: StoragePolls,
): Promise<StorageOutcome> {
  const { cluster, key } = session;
  const name = workloadName(key.name);
  const storage = input.spec.storage ?? "";
  const claims = dataClaims(
    await cluster.list<ObservedClaim>("v1", "PersistentVolumeClaim", key.namespace, selectorString(key.name)),
    name,
  );
  const classNames = new Set(claimsSmallerThan(claims, storage).map((claim) => claim.spec?.storageClassName ?? ""));
  const classes = new Map<string, ObservedStorageClass | undefined>();
  for (const className of classNames) {
    classes.set(
      className,
      className === ""
        ? undefined
        : await cluster.find<ObservedStorageClass>("storage.k8s.io/v1", "StorageClass", className),
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
      await cluster.apply(expansion);
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

  const growth = growthOutcome(volumeGrowth(claims, storage, { name, replicas: input.spec.replicas }), pollMs);
  if (plan.recreate && live) {
    // The claim template is immutable: delete the StatefulSet but not its pods (they are adopted by the new one).
    await cluster.delete("apps/v1", "StatefulSet", name, key.namespace, {
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
    warnOnce(session, plan.problem);
    return {
      ...(plan.problem ? { problem: plan.problem } : {}),
      step: {
        reason: RecreatingWorkload,
        message: `re-creating the StatefulSet with ${plan.recreateReason ?? "a new template"}; its pods keep running`,
      },
      requeueAfterMs: pollMs,
      growth,
    };
  }
  // Only claims that are not Bound need a class, so a running instance makes no StorageClass read here.
  const classProblem = plan.problem
    ? undefined
    : await provisioningProblem(cluster, unboundClaimsByClass(plan.desired, claims));
  const problem = plan.problem ?? classProblem;
  warnOnce(session, problem);
  return {
    apply: plan.desired,
    ...(problem ? { problem } : {}),
    ...(classProblem ? { requeueAfterMs: storageClassPollMs } : {}),
    growth,
  };
}

/** Logs a storage problem the status does not report yet (a problem already reported is not news). */
function warnOnce(session: Session, problem: Problem | undefined): void {
  if (problem && !statusHasProblem(previousStatus(session.instance), problem)) {
    session.logger.warn({ reason: problem.reason }, problem.message);
  }
}

/** Volumes still growing: a step, looked at again soon (the resizer's progress is not watched); or the problem. */
function growthOutcome(growth: VolumeGrowth | undefined, pollMs: number): StepOutcome {
  if (growth === undefined) return {};
  if ("problem" in growth) return { problem: growth.problem };
  return { step: growth.step, requeueAfterMs: pollMs };
}

/**
 * Looks up the StorageClasses that the unbound claims in `waiting` need: by name, or all of them when some claims
 * need the default class (nothing but a list finds the default). No read when nothing waits.
 */
async function provisioningProblem(
  cluster: ClusterClient,
  waiting: ReadonlyMap<string | undefined, WaitingClaims>,
): Promise<Problem | undefined> {
  if (waiting.size === 0) return undefined;
  let classes: ObservedStorageClass[];
  if (waiting.has(undefined)) {
    // StorageClasses are cluster-scoped: no namespace lists them all.
    classes = await cluster.list<ObservedStorageClass>("storage.k8s.io/v1", "StorageClass", "", "");
  } else {
    const names = [...waiting.keys()].filter((name) => name !== undefined);
    const found = await Promise.all(
      names.map((name) => cluster.find<ObservedStorageClass>("storage.k8s.io/v1", "StorageClass", name)),
    );
    classes = found.filter((storageClass) => storageClass !== undefined);
  }
  return storageClassProblem(waiting, classes);
}
