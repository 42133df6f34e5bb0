/**
 * One reconcile of one MyAppInstance key, the entry of the reconciler: level-based (it reads everything it needs
 * and never trusts the event that woke it), idempotent, and silent when nothing changed: a converged instance
 * costs reads only, no writes.
 *
 * It loads the instance and runs the steps, each in its own file and each answering a StepOutcome (step.ts):
 * instance gone → done; being deleted → the finalize step (finalize.ts); else ensure the finalizer and validate
 * the spec (invalid → a Degraded status, no retry). With a chart, the chart step (chart.ts) renders, applies and
 * prunes and gives the status. Else: refuse a switch away from a chart that would lose volumes (operator/chart/);
 * the children step (children.ts) applies the Service and the workload, grows volumes and re-creates a
 * StatefulSet whose claim template must change (the storage step, storage.ts over the pure storage-plan.ts), and
 * retires the old workload after a move; the status report (status-report.ts) writes the status if it changed;
 * then prune what a chart rendered that the built-in template does not make.
 */
import type { Logger } from "pino";
import { apiVersion, kind, TransientFailure, validateSpec } from "../../api/index.ts";
import { ConflictError, formatObjectKey, NotFoundError, realClock, type Clock } from "../../kube/index.ts";
import { valuesTooLargeMessage } from "../../chart/index.ts";
import { forgetChartInstance, planTemplateSwitch, pruneChartLeftovers, type ChartDeps } from "../chart/index.ts";
import { reconcileChart } from "./chart.ts";
import { reconcileChildren } from "./children.ts";
import { isTransientFailure, PermanentError, TransientError } from "./errors.ts";
import { ensureFinalizer, finalizeInstance, needsFinalizer } from "./finalize.ts";
import type { ObjectKey, ClusterClient } from "./cluster-client.ts";
import { openSession, type InstanceObject, type Session, type WriteTally } from "./session.ts";
import { previousStatus, reportStatus, writeProblem, writeStatus } from "./status-report.ts";
import { stalledStatus } from "./status.ts";
import { Sightings } from "./sightings.ts";
import { generationLagGraceMs } from "./generation-lag.ts";
import { StatusPacer } from "./status-pacing.ts";
import { mergeOutcomes, type StepOutcome } from "./step.ts";

export interface ReconcileDeps {
  readonly cluster: ClusterClient;
  readonly logger: Logger;
  /** Time for condition timestamps (wallTime) and status pacing (monotonicMs). @default realClock */
  readonly clock?: Clock;
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
  /**
   * Rendering for instances with spec.chart (operator/chart). The operator always has it; a reconciler built
   * without it (the built-in path's unit tests) cannot reconcile a chart instance and fails its reconcile.
   */
  readonly chart?: ChartDeps;
  /**
   * Paces status writes that only report progress (status-pacing.ts). {@link reconciler} makes one that allows
   * one such write per instance every 5 s, less often while many instances are at work; without one (a single
   * {@link reconcile}) every change is written.
   */
  readonly statusPacer?: StatusPacer;
  /**
   * Since when StatefulSets have been missing pods (sightings.ts), so a moment of a rollout reads no events.
   * {@link reconciler} makes one; without one (a single {@link reconcile}) missing pods are looked into at once.
   */
  readonly missingPodSightings?: Sightings;
  /**
   * Since when workloads have lagged a generation nobody asked to roll out (generation-lag.ts), so an annotation on
   * a Ready instance's Deployment flips nothing. {@link reconciler} makes one; without one, a lag is reported at once.
   */
  readonly generationLags?: Sightings;
}

const defaultPollIntervalMs = 5000;

/** The least time between two status writes of one instance that only report progress (counts). */
export const statusProgressIntervalMs = 5000;

/**
 * The progress-only status writes per second that all instances at work share (status-pacing.ts): a fleet of up to
 * 50 rolling out at once keeps the 5 s interval; 1,000 at once write their progress every 100 s, their ends at once.
 */
const statusProgressWritesPerSecond = 10;

/** What a reconcile asks of the runtime next; `{}` means "converged: wait for a change". */
export interface ReconcileOutcome {
  readonly requeueAfterMs?: number;
  /** Only looked in on the chart's background job, still running: the runtime keeps the key's failure count. */
  readonly waiting?: boolean;
}

/** The reconciler in the runtime's shape: `(key, { writes }) => outcome`, counting its writes in the runtime's tally. */
export function reconciler(
  deps: ReconcileDeps,
): (key: ObjectKey, context: { readonly writes: WriteTally }) => Promise<ReconcileOutcome> {
  const paced = {
    ...deps,
    statusPacer:
      deps.statusPacer ??
      new StatusPacer(statusProgressIntervalMs, { fleetWritesPerSecond: statusProgressWritesPerSecond }),
    // Forgotten after a few polls unseen: an instance still waiting on its pods looks again every poll.
    missingPodSightings: deps.missingPodSightings ?? new Sightings(4 * (deps.pollIntervalMs ?? defaultPollIntervalMs)),
    // Forgotten a while after the grace: a lag is looked at again when the grace ends.
    generationLags: deps.generationLags ?? new Sightings(30 * generationLagGraceMs),
  };
  return (key, { writes }) => reconcile(key, paced, writes);
}

/**
 * Reconciles the instance `key`, adding each API write it asks for to `writes` (0 for a converged instance),
 * whether it returns or throws.
 *
 * @throws PermanentError when retrying cannot help until the instance changes (already reported on its status).
 * @throws ConflictError (kube) on a 409, unwrapped, so the runtime retries promptly with a fresh read.
 * @throws TransientError for anything else, with the original error as `cause`: retry with backoff.
 */
export async function reconcile(
  key: ObjectKey,
  deps: ReconcileDeps,
  writes: WriteTally = { count: 0 },
): Promise<ReconcileOutcome> {
  const logger = deps.logger.child({ key: formatObjectKey(key) });
  try {
    return await reconcileKey(key, deps, logger, writes);
  } catch (error) {
    if (error instanceof PermanentError || error instanceof TransientError || error instanceof ConflictError) {
      throw error;
    }
    const detail = error instanceof Error ? error.message : String(error);
    throw new TransientError(`reconcile ${formatObjectKey(key)}: ${detail}`, { cause: error });
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
  key: ObjectKey,
  error: unknown,
  deps: ReconcileDeps,
  retryIntervalMs = 300_000,
): Promise<void> {
  const instance = await deps.cluster.find<InstanceObject>(apiVersion, kind, key.name, key.namespace);
  if (!instance || instance.metadata.deletionTimestamp) return;
  const session = openSession(
    deps.cluster,
    key,
    instance,
    deps.logger.child({ key: formatObjectKey(key) }),
    deps.clock ?? realClock,
    { statusPacer: deps.statusPacer },
  );
  const detail = error instanceof Error ? error.message : String(error);
  const retry = `retrying about every ${formatInterval(retryIntervalMs)}, and at once on a change`;
  if (isTransientFailure(error)) {
    const previous = previousStatus(instance);
    const problem = {
      reason: TransientFailure,
      message: `the operator keeps failing to reconcile this instance for a transient cause; ${retry}: ${detail}`,
    };
    const next = stalledStatus(previous, instance.metadata.generation ?? 0, problem, session.startedAt);
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

async function reconcileKey(
  key: ObjectKey,
  deps: ReconcileDeps,
  logger: Logger,
  writes: WriteTally,
): Promise<ReconcileOutcome> {
  const instance = await deps.cluster.find<InstanceObject>(apiVersion, kind, key.name, key.namespace);
  if (!instance) {
    logger.debug({}, "instance is gone");
    deps.statusPacer?.forget(formatObjectKey(key));
    forgetChartInstance(deps.chart, key);
    return {};
  }
  const memory = { statusPacer: deps.statusPacer, generationLags: deps.generationLags };
  const session = openSession(deps.cluster, key, instance, logger, deps.clock ?? realClock, memory, writes);
  try {
    return await reconcileInstance(session, deps);
  } catch (error) {
    // A write that found the instance (or its namespace) gone: deleted while we worked, which is expected, not a
    // failure to retry and warn about. The cache tells (its watch delivers the deletion within moments); a live read
    // would need a `get` verb the operator's RBAC does not grant and otherwise never uses.
    if (!(error instanceof NotFoundError)) throw error;
    const cached = await deps.cluster.find<InstanceObject>(apiVersion, kind, key.name, key.namespace);
    if (cached && !cached.metadata.deletionTimestamp && cached.metadata.uid === instance.metadata.uid) throw error;
    logger.debug({ error: error.message, writes: session.writes() }, "instance deleted while it was reconciled");
    return {};
  }
}

async function reconcileInstance(session: Session, deps: ReconcileDeps): Promise<ReconcileOutcome> {
  const { instance } = session;
  if (instance.metadata.deletionTimestamp) {
    forgetChartInstance(deps.chart, session.key);
    return finished(await finalizeInstance(session));
  }
  if (needsFinalizer(instance.spec, deps.chart?.defaultChart)) await ensureFinalizer(session);

  if (instance.valuesWithheld) {
    const { bytes, limitKiB } = instance.valuesWithheld;
    // Permanent until the values shrink; what runs keeps running as it was last rendered.
    await writeProblem(session, {
      reason: "ValuesTooLarge",
      message: `spec.values ${valuesTooLargeMessage(bytes, limitKiB)}; nothing is rendered or changed until they are smaller`,
    });
    return finished({});
  }
  const verdict = validateSpec(instance.spec);
  if (!verdict.ok) {
    const issues = verdict.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
    // Permanent, but not an error for the runtime: the status says what to fix and a spec change wakes us up.
    await writeProblem(session, { reason: "InvalidSpec", message: `the spec is invalid: ${issues}` });
    return finished({});
  }
  const chart = verdict.spec.chart ?? deps.chart?.defaultChart;
  if (chart) {
    const previous = previousStatus(instance);
    const outcome = await reconcileChart(session, { ...verdict.spec, chart }, previous, deps.chart);
    // No status while the chart's fetch and render still run in the background: nothing new to say.
    if (outcome.status) await writeStatus(session, previous, outcome.status);
    if (outcome.failure) throw outcome.failure;
    if (!outcome.status) return { ...finished(outcome), waiting: true };
    return finished(outcome);
  }
  forgetChartInstance(deps.chart, session.key);
  // Objects a chart rendered before spec.chart was removed: checked against the storage rules first, pruned once
  // the built-in children are applied (so the app keeps serving through the switch).
  const leaving = await planTemplateSwitch(session, verdict.spec, deps.chart?.allowedKinds);
  if (!leaving.ok) {
    session.logger.warn({ reason: leaving.refusal.reason }, leaving.refusal.message);
    await writeProblem(session, leaving.refusal);
    throw new PermanentError(leaving.refusal.message, { reason: leaving.refusal.reason });
  }
  const children = await reconcileChildren(session, verdict.spec, {
    pollMs: deps.pollIntervalMs ?? defaultPollIntervalMs,
    storageClassPollMs: deps.storageClassPollMs ?? 30_000,
    missingPodSightings: deps.missingPodSightings,
  });
  const reported = await reportStatus(session, verdict.spec, children);
  await pruneChartLeftovers(session, leaving.prune);
  return finished(mergeOutcomes(children, reported));
}

/** The runtime's answer for a reconcile that ran its steps: when to look again (its writes are in the tally). */
function finished({ requeueAfterMs }: StepOutcome): ReconcileOutcome {
  return requeueAfterMs !== undefined ? { requeueAfterMs } : {};
}
