/**
 * The chart step of a reconcile (an instance with `spec.chart`): the chart wing (operator/chart/) prepares the
 * render (fetch, render, checks against the cluster), applies it and prunes what it no longer contains; this step
 * turns each outcome into the instance's status, exactly as the built-in template's steps do, and reconcile.ts
 * writes it.
 */
import {
  formatBytes,
  isReady,
  parseQuantity,
  type MyAppInstanceSpec,
  type MyAppInstanceStatus,
} from "../../api/index.ts";
import { ChartFetchError, objectName, valuePath, type RenderUsage } from "../../chart/index.ts";
import { NotFoundError, type KubeObject } from "../../kube/index.ts";
import {
  applyRender,
  imageMismatch,
  isWorkload,
  mainServiceEndpoint,
  mainWorkload,
  prepareChart,
  pruneRender,
  sameObject,
  type ChartDeps,
  type PreparedRender,
  type RenderChanges,
} from "../chart/index.ts";
import { instanceUsage } from "../admission/namespace-budget.ts";
import { childRejection, PermanentError, TransientError } from "./errors.ts";
import { changedEvent, createdEvent } from "./lifecycle-events.ts";
import type { ObservedWorkload } from "./observed.ts";
import { readWithinLagGrace } from "./generation-lag.ts";
import { rolloutProgress } from "./rollout.ts";
import { referenceTo, type Session } from "./session.ts";
import { computeStatus, problemStatus, type Problem, type Step } from "./status.ts";
import { byCodeUnits } from "../../api/code-unit-order.ts";

/** The chart step's result: the status to write, and how the runtime should go on. */
export interface ChartOutcome {
  /** Undefined while the chart is still being fetched or rendered in the background: nothing new to say. */
  readonly status?: MyAppInstanceStatus;
  /** Look again after this long (the chart's job has not settled yet). */
  readonly requeueAfterMs?: number;
  /** Thrown by reconcile after the status is written: Permanent (wait for a change) or Transient (back off). */
  readonly failure?: PermanentError | TransientError;
}

/** Reconciles the objects of an instance whose spec names a chart. */
export async function reconcileChart(
  session: Session,
  spec: MyAppInstanceSpec,
  previous: MyAppInstanceStatus | undefined,
  deps: ChartDeps | undefined,
): Promise<ChartOutcome> {
  const generation = session.instance.metadata.generation ?? 0;
  // The status to build on: the one read, or the one said before the render was applied (below).
  let current = previous;
  const permanent = (refusal: Problem & { readonly outsideSpec?: boolean }, cause?: unknown): ChartOutcome => {
    const { reason, message } = refusal;
    session.logger.warn({ reason }, message);
    // A namespace's chart-sources annotation may be widened, or its budget freed, without the instance changing:
    // looked at again, slowly (a source refusal costs a Namespace read, no fetch: it comes before it).
    const outsideSpec = (cause instanceof ChartFetchError && cause.outsideSpec) || refusal.outsideSpec === true;
    const failure = new PermanentError(message, { reason, cause, outsideSpec });
    return { status: problemStatus(current, generation, { reason, message }, session.startedAt), failure };
  };
  const chart = spec.chart;
  if (!chart) throw new Error("reconcileChart needs spec.chart");
  // The operator always wires chart rendering (main.ts); only a reconciler built for the built-in path lacks it.
  if (!deps) throw new Error("reconcileChart needs chart rendering (ReconcileDeps.chart)");

  // Ready at this spec: the render only re-checks it, and waits behind instances that changed or are not Ready.
  const recheck =
    previous !== undefined &&
    isReady({ metadata: { generation: session.instance.metadata.generation }, status: previous });
  const prepared = await prepareChart(session, spec, chart, deps, recheck ? "low" : "normal");
  if (prepared.state === "pending") return { requeueAfterMs: prepared.requeueAfterMs };
  if (prepared.state === "refused") return permanent(prepared.refusal, prepared.cause);

  // Admission counts a chart instance by status.chartUsage (operator/admission/namespace-budget.ts), which says a
  // render once it is applied whole. Where a budget holds, a render that takes more is said there first: a write
  // admitted while its objects are applied, or after the apiserver refused part of them (ChildRejected), counts
  // what they run. It is lowered only by a whole render applied (chartStatus).
  const grown = grownUsage(spec, previous?.chartUsage, prepared.usage);
  if (grown && (await deps.namespaceBudget?.counts(session.key.namespace))) {
    current = { ...previous, chartUsage: grown };
    try {
      await session.cluster.applyStatus(session.key, current);
    } catch (error) {
      // Deleted while we worked: nothing left to apply for.
      if (error instanceof NotFoundError) return {};
      throw error;
    }
  }

  let applied: readonly KubeObject[];
  try {
    const outcome = await applyRender(session, prepared, deps.appliedWriteOnly);
    if (!outcome.ok) return permanent(outcome.refusal);
    applied = outcome.applied;
    await tellChanges(session, outcome);
  } catch (caught) {
    // A 400/422, or admission's 403 (a policy, a webhook, a quota): not retried until the instance changes.
    const error = childRejection(caught);
    if (!error) throw caught;
    return permanent(
      { reason: "ChildRejected", message: `the apiserver rejected an object the chart rendered: ${error.message}` },
      error,
    );
  }

  await pruneRender(session, prepared);
  const { status, recheckAfterMs } = chartStatus(session, spec, current, prepared, applied);
  return { status, ...(recheckAfterMs !== undefined ? { requeueAfterMs: recheckAfterMs } : {}) };
}

/**
 * The usage to say before applying a render that takes `usage`: in each dimension the larger of it and what the
 * status says, or undefined when admission already counts as much (the larger of the spec's and the status's,
 * namespace-budget.ts `instanceUsage`: a render that takes what the spec asks needs no word, nor a Namespace read).
 */
export function grownUsage(
  spec: Pick<MyAppInstanceSpec, "replicas" | "storage">,
  said: MyAppInstanceStatus["chartUsage"],
  usage: RenderUsage,
): MyAppInstanceStatus["chartUsage"] | undefined {
  const counted = instanceUsage({ spec, ...(said ? { status: { chartUsage: said } } : {}) });
  if (usage.replicas <= counted.replicas && usage.storageNanos <= counted.storage) return undefined;
  const saidReplicas = BigInt(said?.replicas ?? 0);
  const saidStorage = (said ? parseQuantity(said.storage)?.nanos : undefined) ?? 0n;
  return chartUsage({
    replicas: usage.replicas > saidReplicas ? usage.replicas : saidReplicas,
    storageNanos: usage.storageNanos > saidStorage ? usage.storageNanos : saidStorage,
  });
}

/**
 * The status of a chart instance: counts and image of the main workload (see mainWorkload), Ready only when
 * every rendered workload is rolled out, plus a note on what the operator does not run (hooks, tests, CRDs); and
 * when to look again, while a workload's unseen generation nobody asked for is within its grace (generation-lag.ts).
 */
function chartStatus(
  session: Session,
  spec: MyAppInstanceSpec,
  previous: MyAppInstanceStatus | undefined,
  render: PreparedRender,
  applied: readonly KubeObject[],
): { readonly status: MyAppInstanceStatus; readonly recheckAfterMs?: number } {
  const { objects } = render;
  const main = mainWorkload(objects, session.key.name);
  const rechecks: number[] = [];
  const workloads = (applied.filter(isWorkload) as ObservedWorkload[]).map((workload) => {
    const image = main && sameObject(workload, main) ? rolloutProgress(workload, 1).image : undefined;
    const read = readWithinLagGrace(session, workload, workload.spec?.replicas ?? 1, image, previous);
    if (read.recheckAfterMs !== undefined) rechecks.push(read.recheckAfterMs);
    return read.workload ?? workload;
  });
  const mainLive = main ? workloads.find((workload) => sameObject(workload, main)) : undefined;
  const pending = workloads
    .filter((workload) => workload !== mainLive)
    .filter((workload) => !rolloutProgress(workload, workload.spec?.replicas ?? 1).complete)
    .map((workload) => objectName(workload));
  const step: Step | undefined =
    pending.length > 0
      ? { reason: "WaitingForWorkloads", message: `waiting for ${pending.join(", ")} to roll out` }
      : undefined;
  const mainProgress = mainLive ? rolloutProgress(mainLive, mainLive.spec?.replicas ?? 1) : undefined;
  // The chart decides the image and replicas; the status tracks what it rendered for the main workload.
  const effective = {
    ...spec,
    image: mainProgress?.image ?? spec.image,
    replicas: mainLive?.spec?.replicas ?? 1,
  };
  const selector = (mainLive?.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector
    ?.matchLabels;
  const status = computeStatus(
    {
      generation: session.instance.metadata.generation ?? 0,
      spec: effective,
      previous,
      selector: Object.entries(selector ?? {})
        .sort(([a], [b]) => byCodeUnits(a, b))
        .map(([k, v]) => `${k}=${v}`)
        .join(","),
      endpoint: mainServiceEndpoint(objects, session.key.name, session.key.namespace),
      workload: mainLive,
      step,
      // Ready means spec.image runs: a chart that ignores the image values is reported, not trusted.
      problem: imageMismatch(main, spec.image, valuePath(spec, "imageTag") === ""),
    },
    session.startedAt,
  );
  const skipped = [
    ...(render.hooks.length > 0 ? [`hooks and tests not run: ${render.hooks.join(", ")}`] : []),
    ...(render.crds.length > 0 ? [`CRDs in crds/ not applied: ${render.crds.join(", ")}`] : []),
  ];
  if (!main) skipped.push("the chart renders no Deployment or StatefulSet");
  const counted = { ...status, chartUsage: chartUsage(render.usage) };
  return {
    status: skipped.length > 0 ? { ...counted, message: `${status.message ?? ""} (${skipped.join("; ")})` } : counted,
    ...(rechecks.length > 0 ? { recheckAfterMs: Math.min(...rechecks) } : {}),
  };
}

/** A render's usage as the status says it: admission counts a chart instance by it (namespace budgets). */
function chartUsage(usage: RenderUsage): NonNullable<MyAppInstanceStatus["chartUsage"]> {
  const replicas = usage.replicas > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(usage.replicas);
  return { replicas, storage: formatBytes(usage.storageNanos) };
}

/**
 * The render's changes as the built-in template tells its own (lifecycle-events.ts): one `Created` event for every
 * object this reconcile created ("Created Service web and Deployment web"), `Scaled` or `Updated` for a changed
 * object, and nothing for a new image alone (the rollout's events tell it).
 */
async function tellChanges(session: Session, { created, updated }: RenderChanges): Promise<void> {
  const news = createdEvent(created);
  if (news) {
    const related = created.find((object) => object.kind !== "Service") ?? created[0];
    await session.event("Normal", news.reason, "Apply", news.note, related ? referenceTo(related) : undefined);
  }
  for (const { desired, live, applied } of updated) {
    const change = changedEvent(desired, live);
    if (change) await session.event("Normal", change.reason, "Apply", change.note, referenceTo(applied));
  }
}
