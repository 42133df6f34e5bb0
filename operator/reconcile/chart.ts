/**
 * The chart branch of a reconcile (an instance with `spec.chart`): fetch the chart, render it with Helm, apply
 * each rendered object that differs from the live one (server-side apply, the operator's field manager, owned by
 * the instance), prune what the render no longer contains, and compute the status from every rendered
 * workload. Returns the status to write; reconcile.ts writes it, exactly as for the built-in template.
 */
import { createHash } from "node:crypto";
import {
  defaultChartKinds,
  defaultPodSecurityLevel,
  type ChartKind,
  type ChartServiceType,
  type ChartSpec,
  type MyAppInstanceSpec,
  type MyAppInstanceStatus,
} from "../../api/index.ts";
import { ConflictError, InvalidError, NotFoundError, type KubeObject } from "../../kube/index.ts";
import {
  ChartFetchError,
  ChartRenderError,
  chartInstanceLabel,
  chartValues,
  describeSource,
  isWorkload,
  mainServiceEndpoint,
  mainWorkload,
  objectName,
  planRender,
  pruneCandidates,
  renderFailureMessage,
  splitImage,
  valuePath,
  volumeRefusal,
  type Capabilities,
  type ChartRenderer,
  type RenderedObject,
} from "../chart/index.ts";
import { isControlledBy, labelKeys, labelValue, managedBy } from "../desired/index.ts";
import { isSubset } from "./compare.ts";
import type { BackgroundJobs } from "./background-jobs.ts";
import { childRejection, PermanentError, TransientError } from "./errors.ts";
import { imageMismatch } from "./image-match.ts";
import type { ObservedWorkload } from "./observed.ts";
import { rolloutProgress } from "./rollout.ts";
import { referenceTo, type Session } from "./session.ts";
import { computeStatus, problemStatus, type Problem, type Step } from "./status.ts";

/** What the chart branch needs besides the cluster client. */
export interface ChartDeps {
  readonly renderer: ChartRenderer;
  /** The packed chart for `spec.chart` in `namespace` (see operator/chart/sources.ts). */
  readonly fetchChart: (chart: NonNullable<MyAppInstanceSpec["chart"]>, namespace: string) => Promise<Uint8Array>;
  /** Kinds charts may render. @default defaultChartKinds */
  readonly allowedKinds?: readonly ChartKind[];
  /** Service types charts may render besides ClusterIP (`--chart-service-types`). @default ClusterIP only */
  readonly serviceTypes?: readonly ChartServiceType[];
  /** `.Capabilities` of the live cluster. */
  readonly capabilities?: () => Promise<Capabilities>;
  /**
   * What was last applied of each write-only object (Secrets: the operator may not read them), by
   * `namespace/Kind/name`, so a converged instance costs no write for them either (one after a restart).
   */
  readonly appliedWriteOnly?: Map<string, string>;
  /**
   * The platform's default chart (MyAppOperator `defaultChart`, the operator's `--default-chart`): used for every
   * instance whose spec names none. Unset: such instances get the built-in template.
   */
  readonly defaultChart?: ChartSpec;
  /**
   * Where fetches and renders run, beside the workers (see background-jobs.ts). Unset: in the reconcile itself,
   * which is simplest for tests and a one-instance tool.
   */
  readonly jobs?: BackgroundJobs;
}

/**
 * How soon an instance whose chart is still being fetched or rendered in the background is looked at again, when
 * nothing wakes it once the job settles (jobs without `onSettled`).
 */
export const chartJobPollMs = 1_000;

/**
 * The same when the settled job wakes its key (the operator's wiring): only a safety net, so an instance waiting
 * on a source that drips for minutes costs a look every half minute instead of every second.
 */
export const chartJobSafetyPollMs = 30_000;

/** What a chart job depends on: the chart as the spec names it and the values; the same id reuses the job. */
function chartJobId(chart: ChartSpec, spec: MyAppInstanceSpec): string {
  return createHash("sha256")
    .update(JSON.stringify([chart, chartValues(spec)]))
    .digest("hex");
}

/** The chart branch's result: the status to write, and how the runtime should go on. */
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
  const { key, instance } = session;
  const generation = instance.metadata.generation ?? 0;
  const fail = (problem: Problem, failure: PermanentError | TransientError): ChartOutcome => {
    session.logger.warn({ reason: problem.reason }, problem.message);
    return { status: problemStatus(previous, generation, problem, session.wallTime), failure };
  };
  const permanent = (problem: Problem, cause?: unknown) =>
    fail(problem, new PermanentError(problem.message, { reason: problem.reason, cause }));
  const chart = spec.chart;
  if (!chart) throw new Error("reconcileChart needs spec.chart");
  if (!deps) {
    return permanent({
      reason: "ChartsUnsupported",
      message: "this operator runs without a chart engine (helm); remove spec.chart or run the operator with helm",
    });
  }

  // A digest the chart would not get is refused, never dropped: zod and CEL refuse a spec that says so itself; a
  // platform's default chart whose valuePaths.imageDigest is "" is known only here.
  if (splitImage(spec.image).digest !== undefined && valuePath(spec, "imageDigest") === "") {
    return permanent({
      reason: "ImageDigestUnmapped",
      message:
        `spec.image ${spec.image} has a digest, but the chart (${describeSource(chart, key.namespace)}) is given ` +
        "none (its valuePaths.imageDigest is empty), so it would run a mutable tag; give spec.chart.valuePaths." +
        "imageDigest, or remove the digest from spec.image",
    });
  }

  // Fetching and rendering may be slow (a far or hostile source, a chart near its limits): they run as a job beside
  // the reconcile workers, so one tenant's slow chart holds a worker no longer than the jobs' grace, and the
  // instance is looked at again until its job settled (no status write meanwhile).
  const prepare = async () =>
    deps.renderer.render({
      chart: await deps.fetchChart(chart, key.namespace),
      release: key.name,
      namespace: key.namespace,
      values: chartValues(spec),
      ...(deps.capabilities ? { capabilities: await deps.capabilities() } : {}),
    });
  const job = deps.jobs
    ? await deps.jobs.run(`${key.namespace}/${key.name}`, chartJobId(chart, spec), prepare)
    : await prepare().then(
        (value) => ({ settled: true, ok: true, value }) as const,
        (error: unknown) => ({ settled: true, ok: false, error }) as const,
      );
  if (!job.settled) return { requeueAfterMs: deps.jobs?.wakes ? chartJobSafetyPollMs : chartJobPollMs };
  if (!job.ok) {
    const { error } = job;
    if (error instanceof ChartFetchError) {
      // A source that is down, slow or busy may come back: retry with backoff, status untouched; once the fast
      // retries are used up the runtime reports Stalled (TransientFailure), never Degraded, with one reason however
      // the slow retries fail. A 404, a digest mismatch, a cap or a source not allowed is the instance's problem.
      if (error.transient) throw transientChartFailure(session, error);
      return permanent({ reason: error.reason, message: error.message }, error);
    }
    if (error instanceof ChartRenderError) {
      // ChartRenderLimit names the platform's limit helm went over; only the wall-time limit (a busy node) retries.
      const message = renderFailureMessage(describeSource(chart, key.namespace), error);
      if (error.transient) throw transientChartFailure(session, error, message);
      return permanent({ reason: error.reason, message }, error);
    }
    throw error;
  }
  const rendered = job.value;

  const identity = { ...key, uid: instance.metadata.uid ?? "" };
  const allowed = deps.allowedKinds ?? defaultChartKinds;
  const plan = planRender(rendered.manifest, identity, allowed, {
    podSecurityLevel: spec.podSecurityLevel ?? defaultPodSecurityLevel,
    ...(deps.serviceTypes ? { serviceTypes: deps.serviceTypes } : {}),
  });
  if (!plan.ok) return permanent(plan.refusal);

  const live = await liveObjects(session, allowed);
  const refusal = volumeRefusal(
    live.filter((object) => object.kind === "StatefulSet"),
    plan.objects,
    identity.uid,
  );
  if (refusal) return permanent(refusal);

  const readable = plan.objects.filter((object) => !isWriteOnly(object, allowed));
  const taken = await takenObject(session, readable, live, identity.uid);
  if (taken) return permanent(taken);

  const applied: KubeObject[] = [];
  try {
    // Write-only objects first: their ownership is only learnt by writing, and a refusal should come before the
    // rest of the render is applied (Helm's own order puts Secrets early too).
    const ordered = [
      ...plan.objects.filter((object) => isWriteOnly(object, allowed)),
      ...plan.objects.filter((object) => !isWriteOnly(object, allowed)),
    ];
    for (const object of ordered) {
      if (isWriteOnly(object, allowed)) {
        const taken = await ensureWriteOnly(session, object, identity.uid, deps.appliedWriteOnly);
        if (taken) return permanent(taken);
      } else applied.push(await ensureObject(session, object, live));
    }
  } catch (caught) {
    // A 400/422, or admission's 403 (a policy, a webhook, a quota): not retried until the instance changes.
    const error = childRejection(caught);
    if (!error) throw caught;
    return permanent(
      { reason: "ChildRejected", message: `the apiserver rejected an object the chart rendered: ${error.message}` },
      error,
    );
  }

  for (const stale of pruneCandidates(live, plan.objects, identity.uid)) {
    await pruneObject(session, stale, "the chart no longer renders it");
  }

  return { status: chartStatus(session, spec, previous, plan.objects, applied, rendered) };
}

/**
 * The error for a chart failure a retry may heal: logged, with the status left as it is (the runtime's Stalled
 * report after the fast retries is the one status it gets).
 */
function transientChartFailure(session: Session, error: Error, message = error.message): TransientError {
  session.logger.warn({ err: error }, `${message}; retrying`);
  return new TransientError(message, { cause: error });
}

/** Deletes an object the instance controls (only that very object: a uid precondition), with an event. */
export async function pruneObject(session: Session, stale: KubeObject, because: string): Promise<void> {
  await session.cluster.delete(stale.apiVersion, stale.kind, stale.metadata.name ?? "", session.key.namespace, {
    propagationPolicy: "Background",
    ...(stale.metadata.uid ? { preconditionUid: stale.metadata.uid } : {}),
  });
  await session.event("Normal", "Pruned", "Delete", `Deleted ${objectName(stale)}: ${because}`);
  session.logger.info({ kind: stale.kind, name: stale.metadata.name, because }, "pruned object");
}

/** The label selector of the objects a chart rendered for the instance. */
export function chartObjectSelector(instanceName: string): string {
  return `${labelKeys.managedBy}=${managedBy},${chartInstanceLabel}=${labelValue(instanceName)}`;
}

/** Every live object of an allowed kind the operator labelled for this instance (its own or a chart's). */
async function liveObjects(session: Session, allowed: readonly ChartKind[]): Promise<KubeObject[]> {
  // managed-by + the instance's label finds the built-in template's children too, so switching an instance to a
  // chart prunes those the chart does not replace.
  return labelledObjects(session, allowed, [
    chartObjectSelector(session.key.name),
    `${labelKeys.managedBy}=${managedBy},${labelKeys.instance}=${labelValue(session.key.name)}`,
  ]);
}

/**
 * Live objects of `kinds` (but the write-only ones, which the operator may not list) in the instance's namespace
 * matching any of `selectors`, with their apiVersion and kind set.
 */
export async function labelledObjects(
  session: Session,
  kinds: readonly ChartKind[],
  selectors: readonly string[],
): Promise<KubeObject[]> {
  const { key } = session;
  const found = new Map<string, KubeObject>();
  for (const kind of kinds.filter((candidate) => !candidate.writeOnly)) {
    for (const selector of selectors) {
      const objects = await session.cluster.list<KubeObject>(kind.apiVersion, kind.kind, key.namespace, selector);
      for (const object of objects) {
        const withType = { ...object, apiVersion: kind.apiVersion, kind: kind.kind };
        found.set(`${kind.apiVersion}/${kind.kind}/${object.metadata.name ?? ""}`, withType);
      }
    }
  }
  return [...found.values()];
}

/** A rendered object whose name is taken by an object another controller owns: a problem, never a takeover. */
async function takenObject(
  session: Session,
  objects: readonly RenderedObject[],
  live: readonly KubeObject[],
  uid: string,
): Promise<Problem | undefined> {
  for (const object of objects) {
    const existing =
      live.find((candidate) => sameObject(candidate, object)) ??
      // Live, not from the cache: the cache holds only objects with the operator's label, and a same-named object
      // of someone else's must be seen before an apply would take it over. Costs a GET only for objects to create.
      (await session.cluster.find<KubeObject>(
        object.apiVersion,
        object.kind,
        object.metadata.name,
        session.key.namespace,
        {
          live: true,
        },
      ));
    if (!existing || isControlledBy(existing.metadata.ownerReferences, uid)) continue;
    const owner = existing.metadata.ownerReferences?.find((reference) => reference.controller === true);
    if (!owner && existing.metadata.labels?.[labelKeys.managedBy] === managedBy) continue;
    return {
      reason: "ChildOwnedElsewhere",
      message:
        `${objectName(object)} already exists in ${session.key.namespace} and is ` +
        (owner ? `controlled by ${owner.kind} ${owner.name}` : "not the instance's") +
        "; delete it, or rename the release (the instance)",
    };
  }
  return undefined;
}

async function ensureObject(
  session: Session,
  object: RenderedObject,
  live: readonly KubeObject[],
): Promise<KubeObject> {
  const existing = live.find((candidate) => sameObject(candidate, object));
  if (existing && isSubset(object, existing)) return existing;
  const applied = await session.cluster.apply<KubeObject>(object);
  const what = objectName(object);
  await session.event(
    "Normal",
    existing ? "Updated" : "Created",
    "Apply",
    `${existing ? "Updated" : "Created"} ${what} from the chart`,
    referenceTo({ ...applied, apiVersion: object.apiVersion, kind: object.kind }),
  );
  session.logger.info({ kind: object.kind, name: object.metadata.name, created: !existing }, "applied chart object");
  return { ...applied, apiVersion: object.apiVersion, kind: object.kind };
}

/**
 * The status of a chart instance: counts and image of the main workload (see mainWorkload), Ready only when
 * every rendered workload is rolled out, plus a note on what the operator does not run (hooks, tests, CRDs).
 */
function chartStatus(
  session: Session,
  spec: MyAppInstanceSpec,
  previous: MyAppInstanceStatus | undefined,
  objects: readonly RenderedObject[],
  applied: readonly KubeObject[],
  rendered: { readonly hooks: readonly string[]; readonly crds: readonly string[] },
): MyAppInstanceStatus {
  const main = mainWorkload(objects, session.key.name);
  const workloads = applied.filter(isWorkload) as ObservedWorkload[];
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
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join(","),
      endpoint: mainServiceEndpoint(objects, session.key.name, session.key.namespace),
      workload: mainLive,
      step,
      // Ready means spec.image runs: a chart that ignores the image values is reported, not trusted.
      problem: imageMismatch(main, spec.image, valuePath(spec, "imageTag") === ""),
    },
    session.wallTime,
  );
  const skipped = [
    ...(rendered.hooks.length > 0 ? [`hooks and tests not run: ${rendered.hooks.join(", ")}`] : []),
    ...(rendered.crds.length > 0 ? [`CRDs in crds/ not applied: ${rendered.crds.join(", ")}`] : []),
  ];
  if (!main) skipped.push("the chart renders no Deployment or StatefulSet");
  return skipped.length > 0 ? { ...status, message: `${status.message ?? ""} (${skipped.join("; ")})` } : status;
}

function isWriteOnly(object: RenderedObject, allowed: readonly ChartKind[]): boolean {
  return allowed.some((kind) => kind.writeOnly && kind.apiVersion === object.apiVersion && kind.kind === object.kind);
}

/**
 * Applies an object the operator may not read (a Secret) unless this process already applied exactly it, and
 * never over a namesake the instance does not control. Without the read verb, ownership is asked of the apiserver:
 * a create (POST) fails with 409 if the name is taken; then a JSON patch whose only operations `test` that the
 * object's first owner reference is the instance's controller reference changes nothing and fails with 422 if it
 * is not (someone else's Secret, another instance's, or one without owners). Only then is the object applied,
 * with the resourceVersion the test saw as a precondition, so it cannot have been replaced in between (409, and
 * the reconcile is retried). Returns the problem when the name is taken.
 */
async function ensureWriteOnly(
  session: Session,
  object: RenderedObject,
  uid: string,
  appliedWriteOnly: Map<string, string> | undefined,
): Promise<Problem | undefined> {
  const key = `${session.key.namespace}/${object.kind}/${object.metadata.name}`;
  const digest = createHash("sha256").update(JSON.stringify(object)).digest("hex");
  if (appliedWriteOnly?.get(key) === digest) return undefined;
  const { apiVersion, kind, metadata } = object;
  let created = false;
  try {
    await session.cluster.create<KubeObject>(object);
    created = true;
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
  }
  if (!created) {
    let owned: KubeObject;
    try {
      owned = await session.cluster.jsonPatch<KubeObject>(apiVersion, kind, metadata.name, session.key.namespace, [
        { op: "test", path: "/metadata/ownerReferences/0/uid", value: uid },
        { op: "test", path: "/metadata/ownerReferences/0/controller", value: true },
      ]);
    } catch (error) {
      if (error instanceof NotFoundError) {
        throw new TransientError(`${objectName(object)} was deleted while it was being applied`, { cause: error });
      }
      if (!(error instanceof InvalidError)) throw error;
      return {
        reason: "ChildOwnedElsewhere",
        message:
          `${objectName(object)} already exists in ${session.key.namespace} and is not controlled by this ` +
          "instance (another owner, another instance, or none); delete it, or rename the release (the instance)",
      };
    }
    const resourceVersion = owned.metadata.resourceVersion;
    await session.cluster.apply<KubeObject>({
      ...object,
      metadata: { ...metadata, ...(resourceVersion ? { resourceVersion } : {}) },
    });
  }
  appliedWriteOnly?.set(key, digest);
  session.logger.info({ kind, name: metadata.name, created }, "applied write-only chart object");
  return undefined;
}

function sameObject(
  a: { readonly apiVersion?: string; readonly kind?: string; readonly metadata: { readonly name?: string } },
  b: { readonly apiVersion?: string; readonly kind?: string; readonly metadata: { readonly name?: string } },
): boolean {
  return a.apiVersion === b.apiVersion && a.kind === b.kind && a.metadata.name === b.metadata.name;
}
