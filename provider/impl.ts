/**
 * The provider's operations, loaded by the tiny serialized provider (provider.ts) inside each method, so nothing
 * here (clients, schemas, credentials) is captured into state. Pure decisions live in check.ts, diff.ts,
 * manifest.ts and waiting/readiness.ts, the waits in waiting/; this file does the I/O around them.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { apiVersion, kind, type ChartSpec } from "../api/index.ts";
import { ConflictError, NotFoundError, TransportError, type KubeClient } from "../kube/index.ts";
import { clusterIdentity, recordedIdentity, type ClusterIdentity } from "../kube/cluster-identity.ts";
import { formatObjectKey, parseObjectKey } from "../kube/object-key.ts";
import { checkInputs, unwatchedNamespace, type InputFailure } from "./check.ts";
import { verifyCluster } from "./cluster-identity.ts";
import { connect, markSlow, markUnreachable, slowNote, unreachableMessage } from "./connection.ts";
import { instanceLabel, providerLog, stdoutLines } from "./console.ts";
import { diffInputs, unchangedObject, unchangedSpec } from "./diff.ts";
import { readableFailures } from "./failure-display.ts";
import { failForTheUser } from "./user-error.ts";
import {
  containsUnknown,
  inputKeys,
  isUnknown,
  type InstanceInputs,
  type InstanceOutputs,
  type PropertyBag,
} from "./inputs.ts";
import {
  derivedOutputs,
  incarnationOf,
  inputsFromLive,
  outputsFor,
  ownershipProblem,
  type LiveInstance,
} from "./manifest.ts";
import { ResourceInitError } from "./init-error.ts";
import { flushOnShutdown, NoteBoard } from "./notes.ts";
import { applyInstance, operationTime, waitUntilGone, waitUntilReady } from "./waiting/instance-wait.ts";
import { assessReadiness } from "./waiting/readiness.ts";
import { newReconcileRequest } from "./reconcile-request.ts";
import { chartPreview, type PlatformChartSources } from "./chart-preview.ts";
import { missingStorageClass, serverCheck } from "./server-check.ts";

/** `pulumi.dynamic.CheckResult`. */
export interface CheckResult {
  readonly inputs: Record<string, unknown>;
  readonly failures?: InputFailure[];
}

/**
 * zod rules and defaults first (pure); then, when every input is known, something about the instance changed and
 * the cluster answers, the apiserver's dry-run (CRD schema, CEL, admission) and the StorageClass's existence, so
 * those rejections fail `pulumi preview` with the field they concern. An unchanged instance costs no request.
 */
export async function check(olds: PropertyBag, news: PropertyBag): Promise<CheckResult> {
  const result = await checkInstance(olds, news).catch(failForTheUser);
  return result.failures ? { ...result, failures: readableFailures(news, result.failures) } : result;
}

async function checkInstance(olds: PropertyBag, news: PropertyBag): Promise<CheckResult> {
  const outcome = checkInputs(olds, news);
  if (outcome.failures.length > 0) return outcome;
  const inputs = outcome.inputs;
  // A new place only (a name not known yet may be the same): an instance already there is not held hostage to a
  // platform that stopped watching it. Known or not, the other inputs do not matter.
  const { name, namespace } = inputs;
  const elsewhere = olds["namespace"] !== namespace || (!isUnknown(name) && olds["name"] !== name);
  const unwatched =
    typeof namespace === "string" && !isUnknown(namespace) && elsewhere
      ? unwatchedNamespace(namespace, news["platformNamespaces"])
      : undefined;
  if (unwatched) return { inputs, failures: [unwatched] };
  // An unknown anywhere (an object input holds them at their own depth) would reach the dry-run as a literal value.
  if (Object.values(inputs).some(containsUnknown)) return { inputs };

  const checked = inputs as unknown as InstanceInputs;
  const existing = olds["name"] === checked.name && olds["namespace"] === checked.namespace;
  if (existing && unchangedSpec(olds, inputs)) return { inputs };
  // The engine checks one resource at a time (step generation is serial), so every request made here delays all
  // the resources after it. Only a preview needs the apiserver's verdict before anything happens; in `up` the
  // apply in create/update is that verdict (the same schema, CEL and admission), and those run in parallel.
  if (news["previewing"] === false) return { inputs };
  let client: KubeClient;
  try {
    client = connect(checked);
  } catch (error) {
    skippedDryRun(checked, message(error));
    return { inputs };
  }
  const silent = unreachableMessage(client);
  if (silent) return { inputs, failures: [{ property: "", reason: silent }] };
  const slowed = slowNote(client);
  if (slowed) {
    skippedDryRun(checked, slowed);
    return { inputs };
  }
  // A resource already in state is ours by definition (its markers may be about to change: a stack rename).
  const result = await serverCheck(client, checked, {
    creating: !existing,
    checkStorageClass: !existing || olds["storageClassName"] !== checked.storageClassName,
  });
  if (!result.checked && result.unreachable) {
    return { inputs, failures: [{ property: "", reason: markUnreachable(client, result.note) }] };
  }
  if (!result.checked) {
    if (result.slow) markSlow(client, result.note);
    skippedDryRun(checked, result.note);
    return { inputs };
  }
  if (result.failures.length > 0) return { inputs, failures: result.failures };
  if (result.defaulted && result.defaulted.length > 0) {
    const set = result.defaulted.join(", ");
    notes.add(
      `admission sets ${set}`,
      instanceLabel(checked),
      (all) => `the cluster's admission sets ${set} for ${all}`,
    );
  }
  if (checked.chart === undefined) return { inputs };
  const preview = await chartPreview(client, checked, platformChartSources(news["platformChartSources"]));
  if (!preview.checked) {
    notes.add(
      `chart ${preview.note}`,
      instanceLabel(checked),
      (all) => `chart not rendered at preview for ${all}: ${preview.note}`,
    );
    return { inputs };
  }
  return preview.failures.length > 0 ? { inputs, failures: preview.failures } : { inputs };
}

/** The platform's chart sources as the program passed them (resource.ts), if it did. */
function platformChartSources(value: unknown): PlatformChartSources | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const { sources, defaultChart } = value as { sources?: unknown; defaultChart?: unknown };
  if (!Array.isArray(sources) || !sources.every((source) => typeof source === "string")) return undefined;
  return {
    sources,
    ...(defaultChart !== null && typeof defaultChart === "object" ? { defaultChart: defaultChart as ChartSpec } : {}),
  };
}

/**
 * `pulumi.dynamic.DiffResult`: see diff.ts. A forbidden storage change throws, failing the preview; so do
 * credentials that cannot be loaded (a context the kubeconfig lacks), a connection that now reaches another cluster
 * than the one the instance lives in (when that cluster answers), and one that reaches no cluster at all (once per
 * connection: later instances fail at once).
 */
export function diff(id: string, olds: PropertyBag, news: PropertyBag) {
  return diffInstance(id, olds, news).catch(failForTheUser);
}

async function diffInstance(_id: string, olds: PropertyBag, news: PropertyBag) {
  const outcome = diffInputs(olds, news);
  providerLog().debug({ changed: outcome.changed, replaces: outcome.replaces }, "diff");
  const recorded = recordedIdentity(olds["cluster"]);
  if (recorded && !isUnknown(news["kubeconfig"]) && !isUnknown(news["context"])) {
    const inputs = pickInputs(news);
    let client: KubeClient;
    try {
      client = connect(inputs);
    } catch (error) {
      // Unusable credentials (a context the kubeconfig lacks, say) fail the preview: `up` would fail at the first
      // instance, after the cluster provider's own change was applied.
      throw new Error(`${inputs.logicalName}: ${(error as Error).message}`);
    }
    // No answer fails the preview, once and fast: later instances on the connection do not wait again.
    const silent = unreachableMessage(client);
    if (silent) throw new Error(`${inputs.logicalName}: ${silent}`);
    let answered = true;
    try {
      await clusterIdentity(client);
    } catch (error) {
      if (error instanceof TransportError) {
        throw new Error(`${inputs.logicalName}: ${markUnreachable(client, error.message)}`);
      }
      answered = false; // an apiserver that cannot say now: `up` reports it if it has anything to do there
    }
    if (answered) await verifyCluster(client, recorded, "update", inputs);
  }
  return { changes: outcome.changes, replaces: outcome.replaces };
}

/**
 * Applies the object (adopting an existing one only when it carries this stack's and this resource's marker)
 * and waits until it is Ready. If it does not get there, throws a {@link ResourceInitError}: the resource stays
 * in state and the next `pulumi up` carries on.
 */
export async function create(news: PropertyBag): Promise<{ id: string; outs: InstanceOutputs }> {
  const inputs = pickInputs(news);
  const client = connect(inputs);
  const cluster = await clusterIdentity(client);
  await requireStorageClass(client, inputs);
  const existing = await client.find<LiveInstance>(apiVersion, kind, inputs.name, inputs.namespace);
  if (existing) {
    const problem = ownershipProblem(existing, inputs);
    if (problem) throw new Error(problem);
    // Our previous incarnation (a delete-before-replace, an interrupted destroy) is still finalizing: let it go.
    if (existing.metadata.deletionTimestamp) await waitUntilGone(client, inputs, existing.metadata.uid);
  }
  // The resource id is the instance's key text, read back by read and delete: stacks store it, so every state
  // file already written holds this form.
  const id = formatObjectKey(inputs);
  const request = newReconcileRequest();
  // A new incarnation, adopted object or not: an older state entry of this resource no longer deletes it (remove).
  const incarnation = randomUUID();
  // One timeout for the apply (which may wait for the admission webhook) and Ready together.
  const time = operationTime(inputs);
  const applied = await applyInstance(client, inputs, request, incarnation, time).catch(async (error: unknown) => {
    // The apiserver's words for a missing namespace (a missing CRD is another 404: "could not find the resource").
    if (error instanceof NotFoundError && /namespaces "[^"]*" not found/.test(error.message)) {
      throw new Error(
        `${inputs.logicalName}: namespace ${inputs.namespace} does not exist: create it first (a ` +
          `k8s.core.v1.Namespace the instance's namespace input comes from, or kubectl create namespace ${inputs.namespace})`,
        { cause: error },
      );
    }
    throw await appliedAnyway(client, inputs, incarnation, id, cluster, news, error);
  });
  providerLog().debug({ id, generation: applied.metadata.generation, adopted: existing !== undefined }, "applied");
  const outs = await waitUntilReady(client, inputs, applied, request, id, cluster, serializedProvider(news), time);
  return { id, outs };
}

/** Applies the new inputs to the object this resource manages and waits until it is Ready again. */
export async function update(id: string, olds: PropertyBag, news: PropertyBag): Promise<{ outs: InstanceOutputs }> {
  const inputs = pickInputs(news);
  const client = connect(inputs);
  const cluster = await verifyCluster(client, recordedIdentity(olds["cluster"]), "update", inputs);
  if (olds["storageClassName"] !== inputs.storageClassName) await requireStorageClass(client, inputs);
  const live = await client.find<LiveInstance>(apiVersion, kind, inputs.name, inputs.namespace);
  if (live) {
    const problem = ownershipProblem(live, inputs, text(olds["uid"]));
    if (problem) throw new Error(problem);
    // Only the credentials or the timeout changed (a rotated token, verified above to reach the same cluster):
    // store them for refresh and destroy, and write nothing to the cluster. A renamed stack or resource is a
    // change of the object: its ownership annotations must follow, or a later resource of the old name adopts it.
    if (unchangedObject(olds, news) && assessReadiness(live, live.metadata.generation ?? 0).state === "ready") {
      return { outs: outputsFor(inputs, live, cluster) };
    }
  }
  // A request to reconcile now: an update may follow a cause fixed outside the spec (a conflicting Service
  // deleted by hand), which the operator would otherwise see only at its next resync.
  const request = newReconcileRequest();
  const time = operationTime(inputs);
  const applied = await applyInstance(client, inputs, request, text(olds["incarnation"]), time);
  providerLog().debug({ id, generation: applied.metadata.generation }, "applied");
  return { outs: await waitUntilReady(client, inputs, applied, request, id, cluster, serializedProvider(news), time) };
}

/**
 * Refresh: the live spec and status. No id (so the engine drops the resource) when the object is gone from its
 * cluster or has been replaced by one this resource does not own; an error, changing nothing, when the
 * connection reaches another cluster (a 404 there says nothing about the instance).
 */
export async function read(id: string, props: PropertyBag) {
  const { namespace, name } = parseObjectKey(id, { what: "MyAppInstance id" });
  const previous = pickInputs({ ...props, namespace, name });
  const client = connect(previous);
  const cluster = await verifyCluster(client, recordedIdentity(props["cluster"]), "refresh", previous);
  const live = await client.find<LiveInstance>(apiVersion, kind, name, namespace);
  if (!live || ownershipProblem(live, previous, text(props["uid"]))) return {};
  const inputs = inputsFromLive(previous, live);
  // The entry keeps its own incarnation, never the object's: an entry left pending deletion, refreshed after a later
  // create took the object over, must not become the one that deletes it (remove).
  const { incarnation: _current, ...outputs } = outputsFor(inputs, live, cluster);
  const incarnation = text(props["incarnation"]);
  const kept = { ...outputs, ...(incarnation !== undefined ? { incarnation } : {}) };
  // The inputs as check would make them (derived outputs included), so the next diff compares like with like.
  return { id, props: kept, inputs: { ...inputs, ...derivedOutputs(inputs) } };
}

/**
 * Deletes the object, then waits until it is gone: the operator's finalizer has run. Already gone, replaced by an
 * object with another uid, or taken over by a later create of this resource (another incarnation: inputs.ts)
 * counts as done; a connection to another cluster is an error, changing nothing.
 */
export function remove(id: string, props: PropertyBag): Promise<void> {
  // Its error is printed by the host too, as check's and diff's are: a cancelled destroy's message once, no frames.
  return removeInstance(id, props).catch(failForTheUser);
}

async function removeInstance(id: string, props: PropertyBag): Promise<void> {
  const { namespace, name } = parseObjectKey(id, { what: "MyAppInstance id" });
  const inputs = pickInputs({ ...props, namespace, name });
  const client = connect(inputs);
  await verifyCluster(client, recordedIdentity(props["cluster"]), "delete", inputs);
  const uid = text(props["uid"]) || undefined;
  const incarnation = text(props["incarnation"]);
  // The object is read first, then deleted at that version: the operator's status writes may move it on meanwhile.
  for (let attempt = 1; ; attempt++) {
    const live = await client.find<LiveInstance>(apiVersion, kind, name, namespace);
    if (!live) return;
    const leftAlone = otherObject(live, uid, incarnation);
    if (leftAlone) {
      stdoutLines(
        `${instanceLabel(inputs)}: ${leftAlone}; left alone (if no resource of a stack holds it any more: ` +
          `kubectl -n ${namespace} delete myappinstance ${name})`,
      );
      return;
    }
    // Being deleted already (a destroy run again): nothing to ask, only to wait.
    if (live.metadata.deletionTimestamp) break;
    try {
      const deleted = await client.delete(apiVersion, kind, name, namespace, {
        ...(uid ? { preconditionUid: uid } : {}),
        ...(live.metadata.resourceVersion ? { preconditionResourceVersion: live.metadata.resourceVersion } : {}),
      });
      if (!deleted) return;
      break;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      if (attempt === maxDeleteAttempts) {
        throw new Error(
          `${instanceLabel(inputs)}: changed between each read and delete ${maxDeleteAttempts} times (its operator ` +
            "writing its status); run `pulumi destroy` again",
          { cause: error },
        );
      }
      // Backing off, with jitter, for a status write burst (a rollout) to pass: 0.1 s doubling to 2 s, ~11 s in all.
      await sleep(Math.min(2_000, 100 * 2 ** (attempt - 1)) * (0.5 + Math.random()));
    }
  }
  providerLog().debug({ id, uid }, "deleted; waiting for the finalizer");
  await waitUntilGone(client, inputs, uid);
}

/** Reads and deletes before a busy object's status writes let a delete at its version through. */
const maxDeleteAttempts = 10;

/**
 * What to throw when the apply of a create failed with `error`: if the object carries this create's incarnation
 * anyway (a timeout after the apiserver stored it), the instance exists and only this entry may delete it, so the
 * engine must record it (a ResourceInitError with its outputs) rather than forget it; else `error`.
 */
async function appliedAnyway(
  client: KubeClient,
  inputs: InstanceInputs,
  incarnation: string,
  id: string,
  cluster: ClusterIdentity | undefined,
  news: PropertyBag,
  error: unknown,
): Promise<unknown> {
  const live = await client.find<LiveInstance>(apiVersion, kind, inputs.name, inputs.namespace).catch(() => undefined);
  if (live === undefined || incarnationOf(live).incarnation !== incarnation) return error;
  const reason = `${instanceLabel(inputs)}: applied, but its answer was lost (${message(error)})`;
  const next = "The instance stays in the stack: run `pulumi up` again to continue.";
  return new ResourceInitError(
    `${reason}\n${next}`,
    id,
    { ...outputsFor(inputs, live, cluster), ...serializedProvider(news) },
    [reason, next],
  );
}

/** Why `live` is not the object this state entry may delete, or undefined when it is. */
function otherObject(live: LiveInstance, uid: string | undefined, incarnation: string | undefined): string | undefined {
  if (uid !== undefined && live.metadata.uid !== uid) return "now a different object (uid changed)";
  // An entry written before incarnations existed has none: an object that has one was taken over since.
  const current = incarnationOf(live).incarnation;
  if (current !== incarnation) return "now managed by a later create of this resource (its incarnation changed)";
  return undefined;
}

/**
 * Fails before anything is applied when `storageClassName` names no StorageClass of the cluster: what check says
 * in a preview, said again in `up` (which skips check's requests), instead of a claim left Pending.
 */
async function requireStorageClass(client: KubeClient, inputs: InstanceInputs): Promise<void> {
  if (inputs.storageClassName === undefined) return;
  const missing = await missingStorageClass(client, inputs.storageClassName);
  if (missing) throw new Error(`${inputs.logicalName}: storageClassName: ${missing}`);
}

// A note that gained instances is printed again before the process ends: the engine interrupts its plugins when done.
const notes = new NoteBoard({ onShutdown: flushOnShutdown });

/** Says once per reason (not once per instance) that the apiserver was not asked, why, and for which instances. */
function skippedDryRun(inputs: InstanceInputs, note: string): void {
  notes.add(
    `dry-run ${note}`,
    instanceLabel(inputs),
    (all) => `server-side dry-run skipped for ${all}: ${note}; checked with the zod rules only`,
  );
}

/**
 * The serialized provider the engine passed in, as a property. The dynamic-provider host adds it to the outputs
 * of a successful create/update but not to an init error's properties; without it in state, a later delete or
 * refresh of the resource could not load the provider.
 */
function serializedProvider(bag: PropertyBag): Record<string, unknown> {
  const provider = bag[providerKey];
  return typeof provider === "string" ? { [providerKey]: provider } : {};
}

const providerKey = "__provider";

/** Just the input keys (the engine adds `__provider`, outputs add status), with the id's namespace/name. */
function pickInputs(bag: PropertyBag): InstanceInputs {
  const inputs: Record<string, unknown> = {};
  for (const key of inputKeys) if (bag[key] !== undefined && bag[key] !== null) inputs[key] = bag[key];
  return inputs as unknown as InstanceInputs;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
