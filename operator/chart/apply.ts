/**
 * The chart wing's I/O: fetch the chart and render it with Helm (beside the reconcile workers, background-jobs.ts),
 * check the render against the live objects (plan.ts's policy, volume safety, names not the instance's), apply
 * each rendered object that differs from the live one (server-side apply, owned by the instance), and prune what
 * the render no longer contains. The reconcile's chart step (operator/reconcile/chart.ts) calls the three phases in
 * order and turns their outcome into the instance's status; this file decides nothing about the status.
 */
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import {
  defaultChartKinds,
  defaultPodSecurityLevel,
  type ChartKind,
  type ChartServiceType,
  type ChartSpec,
  type MyAppInstanceSpec,
} from "../../api/index.ts";
import {
  ChartFetchError,
  ChartRenderError,
  chartValues,
  describeSource,
  objectName,
  readRender,
  renderFailureMessage,
  renderUsage,
  splitImage,
  valuePath,
  type Capabilities,
  type ChartRenderer,
  type PlatformLimits,
  type RenderPriority,
  type RenderRefusal,
  type RenderedObject,
  type RenderUsage,
} from "../../chart/index.ts";
import {
  ConflictError,
  formatObjectKey,
  InvalidError,
  NotFoundError,
  type KubeObject,
  type ObjectClient,
  type ObjectKey,
} from "../../kube/index.ts";
import { heldElsewhere, isControlledBy, isSubset, labelKeys, labelValue, managedBy } from "../desired/index.ts";
import { TransientError } from "../runtime/errors.ts";
import type { ObjectReference } from "../runtime/event.ts";
import type { BackgroundJobs } from "./background-jobs.ts";
import { chartInstanceLabel } from "./owned.ts";
import { objectId, planRender, pruneCandidates, volumeRefusal } from "./plan.ts";
import { isContentWithheld, RenderedChildren } from "./rendered-children.ts";

/**
 * What the wing needs of one reconcile (operator/reconcile/session.ts's Session satisfies it): the instance's key
 * and uid, the object calls, a logger bound to the key, and events about the instance.
 */
export interface ChartSession {
  readonly key: ObjectKey;
  readonly instance: { readonly metadata: { readonly uid?: string } };
  readonly cluster: ObjectClient;
  readonly logger: Logger;
  /** Tells what a write changed, for the reconcile's log line (see Session.changed). */
  changed(summary: string, details?: Readonly<Record<string, unknown>>): void;
  event(
    type: "Normal" | "Warning",
    reason: string,
    action: string,
    note: string,
    related?: ObjectReference,
  ): Promise<void>;
}

/** What the chart wing needs besides the cluster client: the engine, its policy, and where jobs run. */
export interface ChartDeps {
  readonly renderer: ChartRenderer;
  /** The packed chart for `spec.chart` in `namespace` (see chart/sources.ts). */
  readonly fetchChart: (chart: NonNullable<MyAppInstanceSpec["chart"]>, namespace: string) => Promise<Uint8Array>;
  /** Kinds charts may render. @default defaultChartKinds */
  readonly allowedKinds?: readonly ChartKind[];
  /** Service types charts may render besides ClusterIP (`--chart-service-types`). @default ClusterIP only */
  readonly serviceTypes?: readonly ChartServiceType[];
  /** `.Capabilities` of the live cluster. */
  readonly capabilities?: () => Promise<Capabilities>;
  /**
   * What was last applied of each write-only object (Secrets: the operator may not read them), so a converged
   * instance costs no write for them either (one after a restart). By instance (its key's text), then
   * `Kind/name`: each render replaces its instance's entries, and {@link forgetChartInstance} drops them, so what
   * is kept follows the current renders, not every name a tenant's values ever produced.
   */
  readonly appliedWriteOnly?: Map<string, ReadonlyMap<string, string>>;
  /**
   * Each instance's current render, which the informer cache asks what of a chart's objects to keep whole
   * (rendered-children.ts): the one the informers' transforms ask (operator/watched-kinds.ts). Unset (the chart
   * step without that cache), nothing is recorded and nothing is withheld
   */
  readonly renderedChildren?: RenderedChildren;
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
  /**
   * The platform policy's per-instance limits (registries, replicas, storage), held to every image, replica count
   * and claim size a render sets, as admission holds `spec` to them. Unset: none.
   */
  readonly platformLimits?: PlatformLimits;
  /**
   * The namespace budgets (the policy's `--namespace-max-replicas` and `-storage`, or the namespace's labels), held
   * to what a render takes (chart/render-usage.ts), which admission cannot see in the spec. Unset: none.
   */
  readonly namespaceBudget?: ChartBudget;
}

/** The namespace budgets, as the chart wing asks them (operator/chart-budget.ts keeps them). */
export interface ChartBudget {
  /**
   * The refusal when the instance's render, taking `usage`, would grow past a budget of its namespace; otherwise
   * `usage` is counted for the instance from now on, before its status says so, so renders of one namespace that
   * run at once cannot each take the same room.
   */
  reserve(key: ObjectKey, usage: RenderUsage): Promise<RenderRefusal | undefined>;
  /** Stops counting a render for the instance. */
  forget(key: ObjectKey): void;
  /** Whether some budget holds in `namespace` (admission then counts each chart instance's status.chartUsage). */
  counts(namespace: string): Promise<boolean>;
}

/**
 * Drops what the chart path keeps for the instance `key` between reconciles (its background job, settled or not,
 * its write-only digests, its render's budget reservation and its recorded render): called when the instance is
 * gone or being deleted, or no longer renders a chart, so an instance created and deleted while its render ran
 * leaves nothing behind (a tenant could repeat that).
 */
export function forgetChartInstance(deps: ChartDeps | undefined, key: ObjectKey): void {
  deps?.jobs?.forget(key);
  deps?.appliedWriteOnly?.delete(formatObjectKey(key));
  deps?.namespaceBudget?.forget(key);
  deps?.renderedChildren?.forget(key);
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

/** A render checked against the cluster, ready to apply: the objects, the live ones, what Helm left out. */
export interface PreparedRender {
  readonly objects: readonly RenderedObject[];
  readonly live: readonly KubeObject[];
  readonly allowed: readonly ChartKind[];
  readonly uid: string;
  /** What the render takes of its namespace's budget (status.chartUsage once applied). */
  readonly usage: RenderUsage;
  /** Hooks and tests, and CRDs in crds/: rendered by Helm, never applied by the operator. */
  readonly hooks: readonly string[];
  readonly crds: readonly string[];
}

/** What {@link prepareChart} found: still running, refused (the instance's problem, no retry), or ready. */
export type Preparation =
  | { readonly state: "pending"; readonly requeueAfterMs: number }
  | { readonly state: "refused"; readonly refusal: RenderRefusal; readonly cause?: unknown }
  | ({ readonly state: "ready" } & PreparedRender);

/**
 * Fetches and renders `spec.chart` (as a job beside the workers when `deps.jobs` is set) and checks the render
 * against the cluster: the render policy (plan.ts), volume safety against the live StatefulSets, and names not the
 * instance's. Reads only. `priority` "low": the instance is Ready at its spec and only re-checked (after a
 * restart every chart instance renders again, the cache empty), so its render waits behind those of instances that
 * changed or are not Ready yet.
 * @throws TransientError for a fetch or render a retry may heal (a source down or slow, helm over its wall time).
 */
export async function prepareChart(
  session: ChartSession,
  spec: MyAppInstanceSpec,
  chart: ChartSpec,
  deps: ChartDeps,
  priority: RenderPriority = "normal",
): Promise<Preparation> {
  const { key } = session;
  const refused = (refusal: RenderRefusal, cause?: unknown): Preparation => ({ state: "refused", refusal, cause });

  // A digest the chart would not get is refused, never dropped: zod and CEL refuse a spec that says so itself; a
  // platform's default chart whose valuePaths.imageDigest is "" is known only here.
  if (splitImage(spec.image).digest !== undefined && valuePath(spec, "imageDigest") === "") {
    return refused({
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
      priority,
    });
  const job = deps.jobs
    ? await deps.jobs.run(key, chartJobId(chart, spec), prepare, priority)
    : await prepare().then(
        (value) => ({ settled: true, ok: true, value }) as const,
        (error: unknown) => ({ settled: true, ok: false, error }) as const,
      );
  if (!job.settled) {
    return { state: "pending", requeueAfterMs: deps.jobs?.wakes ? chartJobSafetyPollMs : chartJobPollMs };
  }
  if (!job.ok) {
    const { error } = job;
    if (error instanceof ChartFetchError) {
      // A source that is down, slow or busy may come back: retry with backoff, status untouched; once the fast
      // retries are used up the runtime reports Stalled (TransientFailure), never Degraded, with one reason however
      // the slow retries fail. A 404, a digest mismatch, a cap or a source not allowed is the instance's problem.
      if (error.transient) throw transientChartFailure(session, error);
      return refused({ reason: error.reason, message: error.message }, error);
    }
    if (error instanceof ChartRenderError) {
      // ChartRenderLimit names the platform's limit helm went over; only the wall-time limit (a busy node) retries.
      const message = renderFailureMessage(describeSource(chart, key.namespace), error);
      if (error.transient) throw transientChartFailure(session, error, message);
      return refused({ reason: error.reason, message }, error);
    }
    throw error;
  }
  const rendered = job.value;

  const uid = session.instance.metadata.uid ?? "";
  const identity = { ...key, uid };
  const allowed = deps.allowedKinds ?? defaultChartKinds;
  let manifests;
  try {
    manifests = await readRender(rendered);
  } catch (error) {
    return refused({ reason: "ChartRenderFailed", message: error instanceof Error ? error.message : String(error) });
  }
  const plan = planRender(manifests, identity, allowed, {
    podSecurityLevel: spec.podSecurityLevel ?? defaultPodSecurityLevel,
    storageReclaimPolicy: spec.storageReclaimPolicy,
    ...(deps.serviceTypes ? { serviceTypes: deps.serviceTypes } : {}),
    ...(deps.platformLimits ? { platform: deps.platformLimits } : {}),
  });
  if (!plan.ok) return refused(plan.refusal);

  // Recorded before anything is read or applied: the watch of an object this render creates finds it named.
  const children = deps.renderedChildren ?? new RenderedChildren();
  const keptWhole = children.record(
    key,
    uid,
    plan.objects.filter((object) => !isWriteOnly(object, allowed)),
  );
  if (!keptWhole) {
    session.logger.debug(
      { namespaceBytes: children.chargedBytes(key.namespace), allBytes: children.chargedBytes() },
      "render past what the cache keeps whole of renders; its objects are read live",
    );
  }
  const live = await withContent(session, await liveObjects(session, allowed), plan.objects, uid, children);
  const refusal = volumeRefusal(
    live.filter((object) => object.kind === "StatefulSet"),
    plan.objects,
    uid,
  );
  if (refusal) return refused(refusal);

  const readable = plan.objects.filter((object) => !isWriteOnly(object, allowed));
  const taken = await takenObject(session, readable, live, uid);
  if (taken) return refused(taken);

  // Last, once nothing else refuses the render: a reservation counts from here on.
  const usage = renderUsage(plan.objects);
  const overBudget = await deps.namespaceBudget?.reserve(key, usage);
  if (overBudget) return refused(overBudget);

  return {
    state: "ready",
    objects: plan.objects,
    live,
    allowed,
    uid,
    usage,
    hooks: rendered.hooks,
    crds: rendered.crds,
  };
}

/** What applying a render changed among the readable objects, for the caller's lifecycle events. */
export interface RenderChanges {
  /** Objects that did not exist, as applied. */
  readonly created: readonly KubeObject[];
  /** Objects that differed from their live copy: what was applied over what was there. */
  readonly updated: readonly {
    readonly desired: KubeObject;
    readonly live: KubeObject;
    readonly applied: KubeObject;
  }[];
}

/**
 * Applies each object of the render that differs from its live copy, write-only objects (Secrets) first. Returns
 * the objects as applied (the readable ones) and what changed, or the refusal when a write-only object's name is
 * taken. A write the apiserver rejects is thrown as it is: the caller decides what a rejection means for the
 * instance. No events here: the caller tells the changes as the built-in template's are told (one Created event
 * for all new objects, none for a new image alone), which costs an instance fewer writes than one per object.
 */
export async function applyRender(
  session: ChartSession,
  render: PreparedRender,
  appliedWriteOnly: Map<string, ReadonlyMap<string, string>> | undefined,
): Promise<
  | ({ readonly ok: true; readonly applied: readonly KubeObject[] } & RenderChanges)
  | { readonly ok: false; readonly refusal: RenderRefusal }
> {
  const { objects, allowed, live, uid } = render;
  const applied: KubeObject[] = [];
  const changes = { created: [] as KubeObject[], updated: [] as RenderChanges["updated"][number][] };
  // Write-only objects first: their ownership is only learnt by writing, and a refusal should come before the
  // rest of the render is applied (Helm's own order puts Secrets early too).
  const ordered = [
    ...objects.filter((object) => isWriteOnly(object, allowed)),
    ...objects.filter((object) => !isWriteOnly(object, allowed)),
  ];
  const instanceKey = formatObjectKey(session.key);
  const before = appliedWriteOnly?.get(instanceKey) ?? new Map<string, string>();
  const after = new Map<string, string>();
  const liveById = byObjectId(live);
  try {
    for (const object of ordered) {
      if (isWriteOnly(object, allowed)) {
        const taken = await ensureWriteOnly(session, object, uid, before, after);
        if (taken) return { ok: false, refusal: taken };
      } else applied.push(await ensureObject(session, object, liveById, changes));
    }
  } finally {
    if (after.size > 0) appliedWriteOnly?.set(instanceKey, after);
    else appliedWriteOnly?.delete(instanceKey);
  }
  return { ok: true, applied, ...changes };
}

/** Deletes what the instance controls and the render no longer contains (the built-in template's children too). */
export async function pruneRender(session: ChartSession, render: PreparedRender): Promise<void> {
  for (const stale of pruneCandidates(render.live, render.objects, render.uid)) {
    await pruneObject(session, stale, "the chart no longer renders it");
  }
}

/**
 * The error for a chart failure a retry may heal: logged, with the status left as it is (the runtime's Stalled
 * report after the fast retries is the one status it gets).
 */
function transientChartFailure(session: ChartSession, error: Error, message = error.message): TransientError {
  session.logger.warn({ err: error }, `${message}; retrying`);
  return new TransientError(message, { cause: error });
}

/** Deletes an object the instance controls (only that very object: a uid precondition), with an event. */
export async function pruneObject(session: ChartSession, stale: KubeObject, because: string): Promise<void> {
  await session.cluster.delete(stale.apiVersion, stale.kind, stale.metadata.name ?? "", session.key.namespace, {
    propagationPolicy: "Background",
    ...(stale.metadata.uid ? { preconditionUid: stale.metadata.uid } : {}),
  });
  await session.event("Normal", "Pruned", "Delete", `Deleted ${objectName(stale)}: ${because}`);
  session.changed(`${stale.kind}/${stale.metadata.name ?? ""} pruned`, { because });
}

/** The label selector of the objects a chart rendered for the instance. */
export function chartObjectSelector(instanceName: string): string {
  return `${labelKeys.managedBy}=${managedBy},${chartInstanceLabel}=${labelValue(instanceName)}`;
}

/** Every live object of an allowed kind the operator labelled for this instance (its own or a chart's). */
async function liveObjects(session: ChartSession, allowed: readonly ChartKind[]): Promise<KubeObject[]> {
  // managed-by + the instance's label finds the built-in template's children too, so switching an instance to a
  // chart prunes those the chart does not replace.
  return labelledObjects(session, allowed, [
    chartObjectSelector(session.key.name),
    `${labelKeys.managedBy}=${managedBy},${labelKeys.instance}=${labelValue(session.key.name)}`,
  ]);
}

/**
 * `live` with the content of each object the render names and the instance controls whose cached copy is only its
 * identity (rendered-children.ts: its render was not known yet when the watch delivered it, after a start or a
 * leader change, or it is bigger than the render makes it): a copy read live earlier at that version, else read
 * live now. Any other cached identity stays as it is: pruning and the ownership checks read no more of it, and
 * volume safety reads what the cache keeps of a StatefulSet.
 */
async function withContent(
  session: ChartSession,
  live: readonly KubeObject[],
  rendered: readonly RenderedObject[],
  uid: string,
  children: RenderedChildren,
): Promise<KubeObject[]> {
  const names = new Set(rendered.map(objectId));
  const complete: KubeObject[] = [];
  for (const object of live) {
    if (!isContentWithheld(object)) {
      children.dropCopy(session.key, object);
      complete.push(object);
    } else if (!names.has(objectId(object)) || !isControlledBy(object.metadata.ownerReferences, uid)) {
      complete.push(object);
    } else {
      const copy =
        children.copyOf<KubeObject>(session.key, uid, object) ?? (await readLive(session, object, uid, children));
      // Gone meanwhile: applied as a new object (its namesake, if one comes, is looked up first).
      if (copy) complete.push(copy);
    }
  }
  return complete;
}

/** `object` read live, without managedFields; kept for the next reconciles when the render names it as it is. */
async function readLive(
  session: ChartSession,
  object: KubeObject,
  uid: string,
  children: RenderedChildren,
): Promise<KubeObject | undefined> {
  const { apiVersion, kind } = object;
  const found = await session.cluster.find<KubeObject>(
    apiVersion,
    kind,
    object.metadata.name ?? "",
    session.key.namespace,
    { live: true },
  );
  if (!found) return undefined;
  const { managedFields, ...metadata } = found.metadata;
  const copy = { ...found, apiVersion, kind, metadata };
  if (isControlledBy(metadata.ownerReferences, uid)) children.remember(session.key, uid, copy);
  return copy;
}

/**
 * Live objects of `kinds` (but the write-only ones, which the operator may not list) in the instance's namespace
 * matching any of `selectors`, with their apiVersion and kind set.
 */
export async function labelledObjects(
  session: ChartSession,
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

/** A rendered object whose name is taken by an object the instance does not control: a problem, never a takeover. */
async function takenObject(
  session: ChartSession,
  objects: readonly RenderedObject[],
  live: readonly KubeObject[],
  uid: string,
): Promise<RenderRefusal | undefined> {
  const liveById = byObjectId(live);
  for (const object of objects) {
    const existing =
      liveById.get(objectId(object)) ??
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
    // Without a controller it is someone's all the same (heldElsewhere), the operator's label or not: anyone who may
    // create an object may label it so.
    const held = existing && heldElsewhere(existing.metadata.ownerReferences, uid);
    if (!held) continue;
    return {
      reason: "ChildOwnedElsewhere",
      message:
        `${objectName(object)} already exists in ${session.key.namespace} and is ${held}; delete it, or rename ` +
        "the release (the instance)",
    };
  }
  return undefined;
}

async function ensureObject(
  session: ChartSession,
  object: RenderedObject,
  live: ReadonlyMap<string, KubeObject>,
  changes: { created: KubeObject[]; updated: RenderChanges["updated"][number][] },
): Promise<KubeObject> {
  const existing = live.get(objectId(object));
  if (existing && isSubset(object, existing)) return existing;
  const applied = {
    ...(await session.cluster.apply<KubeObject>(object)),
    apiVersion: object.apiVersion,
    kind: object.kind,
  };
  if (existing) changes.updated.push({ desired: object as KubeObject, live: existing, applied });
  else changes.created.push(applied);
  session.changed(`${object.kind}/${object.metadata.name} ${existing ? "updated" : "created"}`);
  return applied;
}

/**
 * The live objects by {@link objectId}: looked up once per rendered object, among as many objects as anyone gave
 * the instance's labels (forged ones are cached as identities, but cached all the same). A scan per rendered object
 * cost a reconcile seconds of the event loop with tens of thousands of them.
 */
function byObjectId(live: readonly KubeObject[]): ReadonlyMap<string, KubeObject> {
  return new Map(live.map((object) => [objectId(object), object]));
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
  session: ChartSession,
  object: RenderedObject,
  uid: string,
  before: ReadonlyMap<string, string>,
  after: Map<string, string>,
): Promise<RenderRefusal | undefined> {
  const key = `${object.kind}/${object.metadata.name}`;
  const digest = createHash("sha256").update(JSON.stringify(object)).digest("hex");
  if (before.get(key) === digest) {
    after.set(key, digest);
    return undefined;
  }
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
  after.set(key, digest);
  session.changed(`${kind}/${metadata.name} ${created ? "created" : "updated"}`, { writeOnly: true });
  return undefined;
}
