/**
 * The finalizer of an instance: put on before anything is made for it, and on deletion (the finalize step) delete
 * the children it controls, keep the volume claims of its StatefulSets (the built-in template's and its chart's)
 * unless its storageReclaimPolicy is Delete (no data is deleted implicitly), then remove the finalizer so the
 * apiserver can let the instance go. Under Retain the finalizer first takes off the owner references a StatefulSet
 * with `whenDeleted: Delete` left on claims (claim-owners.ts), so the garbage collector cannot delete them with it;
 * under Delete it deletes the built-in template's claims by name (those made since the instance was: an older one
 * is an earlier namesake's, kept under its Retain, and a StatefulSet that mounted one is made to keep its claims
 * and that one released, as under Retain), and a chart's go with their StatefulSet (its
 * `whenDeleted: Delete`, operator/chart/plan.ts: the operator may not write a chart's claims). Nothing here waits
 * but for that (a StatefulSet that still said Delete must have seen Retain first): the garbage collector and the
 * claims' own protection finalizer finish the job after us.
 */
import { finalizer, labelValue } from "../../api/index.ts";
import { AdmissionDeniedError, InvalidError, NotFoundError, type KubeObject } from "../../kube/index.ts";
import { chartInstanceLabel, isContentWithheld } from "../chart/index.ts";
import {
  governingServiceName,
  isControlledBy,
  labelKeys,
  managedBy,
  selectorString,
  serviceName,
  workloadName,
} from "../desired/index.ts";
import {
  claimsOf,
  observed,
  releaseClaimPatch,
  retainClaimsPatch,
  retainsClaims,
  type ClaimMaker,
} from "./claim-owners.ts";
import { TransientError } from "./errors.ts";
import type { ObservedClaim } from "./observed.ts";
import { referenceTo, type Session } from "./session.ts";
import type { StepOutcome } from "./step.ts";
import { dataClaims } from "./storage-plan.ts";

/**
 * Whether an instance needs the finalizer: only when its deletion leaves work the garbage collector cannot do. Its
 * Deployment and Services are controlled by it and go with it; the volume claims of a StatefulSet (`storage`) are
 * not, and their reclaim policy is ours to carry out; a chart may render anything. Read from the raw spec, before
 * validation: anything set there counts.
 */
export function needsFinalizer(spec: unknown, defaultChart: unknown): boolean {
  if (defaultChart !== undefined) return true;
  if (typeof spec !== "object" || spec === null) return true;
  const fields = spec as Record<string, unknown>;
  return (fields["storage"] ?? fields["chart"]) !== undefined;
}

/** Puts the finalizer on the instance unless it is there, so a deletion waits for the finalize step. */
export async function ensureFinalizer(session: Session): Promise<void> {
  if (session.instance.metadata.finalizers?.includes(finalizer)) return;
  const stored = await storedFinalizers(session);
  if (stored.finalizers.includes(finalizer)) return; // read live: the cache had not seen it yet
  await session.cluster.setFinalizers({ ...session.key, ...stored }, [...stored.finalizers, finalizer]);
  session.changed("finalizer added", { finalizer });
}

/**
 * The instance's finalizers and the version they are read at: from the cache, or, where the cache did not keep a
 * list that long (operator/instance-as-read.ts), read live, by a list of its name (the operator's role may list
 * instances, not get them). NotFound when it is gone meanwhile.
 */
async function storedFinalizers(session: Session): Promise<{ finalizers: string[]; resourceVersion: string }> {
  const { instance, cluster, key } = session;
  const read = instance.finalizersWithheld
    ? (
        await cluster.list<KubeObject>(
          instance.apiVersion,
          instance.kind,
          key.namespace,
          "",
          `metadata.name=${key.name}`,
        )
      )[0]
    : instance;
  if (!read) throw new NotFoundError(404, `${instance.kind} ${key.namespace}/${key.name} not found`);
  return { finalizers: [...(read.metadata.finalizers ?? [])], resourceVersion: read.metadata.resourceVersion ?? "" };
}

/**
 * Cleans up after a deleted instance and removes the finalizer; a no-op when our finalizer is not on it. Nothing
 * to wait for and nothing to report (the instance is going): always `{}`.
 */
export async function finalizeInstance(session: Session): Promise<StepOutcome> {
  const { cluster, key, instance } = session;
  const finalizers = instance.metadata.finalizers ?? [];
  if (!finalizers.includes(finalizer)) return {};
  const uid = instance.metadata.uid ?? "";
  const policy = reclaimPolicy(instance.spec);

  // Read before anything is deleted: the StatefulSets the instance controls and every claim in the namespace (a
  // chart's claims carry the chart's labels, not ours, so the cache does not hold them).
  const statefulSets = await controlledStatefulSets(session, uid);
  const namespaceClaims = (
    await cluster.list<ObservedClaim>(
      "v1",
      "PersistentVolumeClaim",
      key.namespace,
      "",
      // A field selector makes it a live list (cluster-client.ts): the cache keeps only our labelled claims, and
      // of those not their owner references.
      `metadata.namespace=${key.namespace}`,
    )
  ).filter((claim) => !claim.metadata.deletionTimestamp);
  // Under Delete only the claims this instance made go: one older than the instance was kept by an earlier instance
  // of the same name (its storageReclaimPolicy Retain) and holds that one's data, whoever uses the name now. A
  // StatefulSet of the instance that mounted such a claim owns it (whenDeleted: Delete) and would take it along, so
  // it is first made to keep its claims and the older ones are released, as under Retain.
  const created = Date.parse(instance.metadata.creationTimestamp ?? "");
  const older = (claim: ObservedClaim) => !(Date.parse(claim.metadata.creationTimestamp ?? "") >= created);
  const ownedBy = (claim: ObservedClaim, statefulSet: ClaimMaker) =>
    (claim.metadata.ownerReferences ?? []).some((reference) => reference.uid === statefulSet.metadata.uid);
  const adopted = namespaceClaims.filter(
    (claim) => older(claim) && statefulSets.some((statefulSet) => ownedBy(claim, statefulSet)),
  );
  const released =
    policy !== "Delete"
      ? await releaseClaims(session, statefulSets, namespaceClaims)
      : adopted.length === 0
        ? []
        : await releaseClaims(
            session,
            statefulSets.filter((statefulSet) => adopted.some((claim) => ownedBy(claim, statefulSet))),
            adopted,
          );
  if (released === "waiting") {
    // Usually the controller's status update wakes the instance within a second; past half a minute, something
    // keeps it from looking (kube-controller-manager down?): look less often, and say so.
    const waitedMs = session.clock.wallTimeMs() - Date.parse(instance.metadata.deletionTimestamp ?? "");
    if (!(waitedMs > retentionObservedPatienceMs)) return { requeueAfterMs: retentionObservedPollMs };
    const names = statefulSets.map((statefulSet) => statefulSet.metadata.name ?? "").join(", ");
    await session.event(
      "Warning",
      "WaitingForStatefulSetController",
      "Delete",
      `Waiting for the StatefulSet controller to see that StatefulSet ${names} keeps its volume claims before it ` +
        "is deleted; is kube-controller-manager running?",
    );
    return { requeueAfterMs: retentionObservedSlowPollMs };
  }

  const children: [apiVersion: string, kind: string, name: string][] = [
    ["apps/v1", "Deployment", workloadName(key.name)],
    ["apps/v1", "StatefulSet", workloadName(key.name)],
    ["v1", "Service", serviceName(key.name)],
    ["v1", "Service", governingServiceName(key.name)],
  ];
  for (const [apiVersion, kind, name] of children) {
    const live = await cluster.find<KubeObject>(apiVersion, kind, name, key.namespace);
    // Only what this instance controls; a namesake of someone else's is not ours to delete.
    if (!live || live.metadata.deletionTimestamp || !isControlledBy(live.metadata.ownerReferences, uid)) continue;
    const deleted = await cluster.delete(apiVersion, kind, name, key.namespace, {
      propagationPolicy: "Background",
      ...(live.metadata.uid ? { preconditionUid: live.metadata.uid } : {}),
    });
    if (deleted) await session.event("Normal", "Deleted", "Delete", `Deleted ${kind} ${name}`, referenceTo(live));
  }

  // The built-in template's claims by its name and labels, then those of every StatefulSet the instance controls
  // (a chart's), by their names; under Retain also any claim whose StatefulSet reference was taken off above.
  const builtIn = dataClaims(
    await cluster.list<ObservedClaim>("v1", "PersistentVolumeClaim", key.namespace, selectorString(key.name)),
    workloadName(key.name),
  ).filter((claim) => !claim.metadata.deletionTimestamp);
  const builtInNames = new Set(builtIn.map((claim) => claim.metadata.name ?? ""));
  const earlier = builtIn.filter(older);
  const earlierNames = new Set(earlier.map((claim) => claim.metadata.name ?? ""));
  const deletable = policy === "Delete" ? builtIn.filter((claim) => !earlierNames.has(claim.metadata.name ?? "")) : [];
  const deletableNames = new Set(deletable.map((claim) => claim.metadata.name ?? ""));
  // Under Delete a chart's claim goes with its StatefulSet when the StatefulSet owns it (whenDeleted: Delete, and
  // the controller has put its reference on, which it does only where the claim's pod exists); any other (a render
  // not applied yet, a claim of a replica scaled away) is kept, and said to be.
  const goesWith = (statefulSet: ClaimMaker, claim: ObservedClaim) =>
    policy === "Delete" &&
    statefulSet.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === "Delete" &&
    (claim.metadata.ownerReferences ?? []).some((reference) => reference.uid === statefulSet.metadata.uid);
  const chartClaims = (going: boolean) =>
    sortedByName(
      statefulSets
        .flatMap((statefulSet) =>
          claimsOf(statefulSet, namespaceClaims).filter((claim) => goesWith(statefulSet, claim) === going),
        )
        .filter((claim) => !builtInNames.has(claim.metadata.name ?? "")),
    );
  const goneWithStatefulSets = chartClaims(true);
  if (goneWithStatefulSets.length > 0) {
    await session.event(
      "Normal",
      "DeletingVolumeClaims",
      "Delete",
      `Volume claims ${goneWithStatefulSets.map((claim) => claim.metadata.name ?? "").join(", ")} go with their ` +
        "StatefulSet (storageReclaimPolicy: Delete)",
    );
  }
  const claims = uniqueByName([...builtIn, ...chartClaims(false), ...sortedByName(released)]);
  const nameList = (list: readonly ObservedClaim[]) => list.map((claim) => claim.metadata.name ?? "").join(", ");
  if (claims.length > 0) {
    const names = nameList(claims);
    if (policy === "Delete") {
      for (const claim of deletable) {
        await cluster.delete("v1", "PersistentVolumeClaim", claim.metadata.name ?? "", key.namespace, {
          propagationPolicy: "Background",
          ...(claim.metadata.uid ? { preconditionUid: claim.metadata.uid } : {}),
        });
      }
      if (deletable.length > 0) {
        await session.event(
          "Normal",
          "DeletedVolumeClaims",
          "Delete",
          `Deleted volume claims ${nameList(deletable)} (storageReclaimPolicy: Delete)`,
        );
      }
      const kept = sortedByName(uniqueByName([...earlier, ...released]));
      const keptNames = new Set(kept.map((claim) => claim.metadata.name ?? ""));
      if (kept.length > 0) {
        await session.event(
          "Warning",
          "RetainedVolumeClaims",
          "Delete",
          `Kept volume claims ${nameList(kept)} although storageReclaimPolicy is Delete: they are older than ` +
            `this instance (an earlier instance named ${key.name} kept them, with their data, under ` +
            "storageReclaimPolicy: Retain); delete them with kubectl delete pvc when no longer needed",
        );
      }
      const unowned = claims.filter(
        (claim) => !builtInNames.has(claim.metadata.name ?? "") && !keptNames.has(claim.metadata.name ?? ""),
      );
      if (unowned.length > 0) {
        await session.event(
          "Warning",
          "RetainedVolumeClaims",
          "Delete",
          `Kept volume claims ${nameList(unowned)} although ` +
            "storageReclaimPolicy is Delete: their StatefulSet does not own them (a render not applied yet, a " +
            "replica scaled away before it said whenDeleted: Delete, or a StatefulSet made to keep its claims " +
            "because it mounted older ones); delete them with kubectl delete pvc",
        );
      }
    } else {
      await session.event(
        "Normal",
        "RetainedVolumeClaims",
        "Delete",
        `Kept volume claims ${names} and their data (storageReclaimPolicy: Retain); delete them with kubectl delete pvc when no longer needed`,
      );
    }
  }

  // Already gone (the finalizer removed by hand meanwhile): NotFound, which reconcile takes for a deletion.
  const stored = await storedFinalizers(session);
  await cluster.setFinalizers(
    { ...key, ...stored },
    stored.finalizers.filter((name) => name !== finalizer),
  );
  await session.event("Normal", "Finalized", "Delete", `Cleaned up; removed the finalizer ${finalizer}`);
  session.logger.info(
    { claimsKept: claims.length - deletableNames.size, claimsReleased: released.length },
    "finalized",
  );
  return {};
}

/**
 * How soon the finalizer looks again after it made a StatefulSet keep its claims: the StatefulSet controller's
 * status update (observedGeneration) usually wakes the instance first; this is the safety net.
 */
export const retentionObservedPollMs = 1000;

/** How long the finalizer waits for the StatefulSet controller before it looks only every {@link retentionObservedSlowPollMs} and warns. */
export const retentionObservedPatienceMs = 30_000;

/** How often it looks after that. */
export const retentionObservedSlowPollMs = 30_000;

/** The StatefulSets the instance controls: the built-in template's by its name, and its chart's by their label. */
async function controlledStatefulSets(session: Session, uid: string): Promise<ClaimMaker[]> {
  const { cluster, key } = session;
  const chartSelector = `${labelKeys.managedBy}=${managedBy},${chartInstanceLabel}=${labelValue(key.name)}`;
  const found = [
    await cluster.find<ClaimMaker>("apps/v1", "StatefulSet", workloadName(key.name), key.namespace),
    ...(await cluster.list<ClaimMaker>("apps/v1", "StatefulSet", key.namespace, chartSelector)),
  ];
  const controlled = new Map<string, ClaimMaker>();
  for (const statefulSet of found) {
    const setUid = statefulSet?.metadata.uid;
    if (statefulSet && setUid && isControlledBy(statefulSet.metadata.ownerReferences, uid)) {
      controlled.set(setUid, statefulSet);
    }
  }
  // Of a StatefulSet its render does not name (after a start, say) the cache keeps only its first claim templates:
  // read whole, once, as the instance goes, so no claim of a later template is missed.
  return Promise.all(
    [...controlled.values()].map(async (statefulSet) =>
      isContentWithheld(statefulSet)
        ? ((await cluster.find<ClaimMaker>("apps/v1", "StatefulSet", statefulSet.metadata.name ?? "", key.namespace, {
            live: true,
          })) ?? statefulSet)
        : statefulSet,
    ),
  );
}

/**
 * Under Retain, before any StatefulSet goes: makes each StatefulSet of the instance that still deletes claims keep
 * them (else its controller would put the references back), and once the controller has seen that ("waiting"
 * until then), takes the StatefulSets' owner references off every claim that carries one. Returns those claims.
 */
async function releaseClaims(
  session: Session,
  statefulSets: readonly ClaimMaker[],
  claims: readonly ObservedClaim[],
): Promise<ObservedClaim[] | "waiting"> {
  const { cluster, key } = session;
  const uids = new Set(statefulSets.flatMap((statefulSet) => statefulSet.metadata.uid ?? []));
  const referenced = (statefulSet: ClaimMaker) =>
    claims.some((claim) =>
      (claim.metadata.ownerReferences ?? []).some((reference) => reference.uid === statefulSet.metadata.uid),
    );
  let waiting = false;
  for (const statefulSet of statefulSets) {
    // One being deleted is no longer synced by its controller: nothing to put references back.
    if (statefulSet.metadata.deletionTimestamp) continue;
    const name = statefulSet.metadata.name ?? "";
    if (!retainsClaims(statefulSet)) {
      try {
        await cluster.jsonPatch("apps/v1", "StatefulSet", name, key.namespace, retainClaimsPatch(statefulSet));
      } catch (error) {
        // Gone, or a namesake since it was read: not ours to change, and no longer putting references back.
        if (error instanceof NotFoundError || error instanceof InvalidError) continue;
        throw error;
      }
      session.changed(`StatefulSet/${name} keeps its volume claims`, { statefulSet: name });
      waiting = true;
    } else if (referenced(statefulSet) && !observed(statefulSet)) {
      waiting = true;
    }
  }
  if (waiting) return "waiting";

  const released: ObservedClaim[] = [];
  for (const claim of claims) {
    const operations = releaseClaimPatch(claim, uids);
    if (operations.length === 0) continue;
    const name = claim.metadata.name ?? "";
    try {
      await cluster.jsonPatch("v1", "PersistentVolumeClaim", name, key.namespace, operations);
    } catch (error) {
      if (error instanceof NotFoundError) continue;
      if (error instanceof AdmissionDeniedError) {
        // A chart's claim carries the chart's labels, and the operator's admission policy lets it write only claims
        // labelled as its own: someone who may must release it, or the StatefulSet would take it along. Said as an
        // event on the instance: a deleted instance's status is not written.
        const removal = operations.filter((operation) => operation.op === "remove");
        const message =
          `Volume claim ${name} is still owned by its StatefulSet, which would delete it with the instance although ` +
          "storageReclaimPolicy is Retain, and the operator's admission policy does not let it change a chart's " +
          `claim: kubectl patch pvc ${name} -n ${key.namespace} --type json -p '${JSON.stringify(removal)}' ` +
          "releases it, and the deletion goes on";
        await session.event("Warning", "ClaimNotReleased", "Delete", message);
        throw new TransientError(message, { cause: error });
      }
      if (error instanceof InvalidError) {
        // Its owner references changed since the list: read again, never remove a reference blind.
        throw new TransientError(`volume claim ${name} changed while its owner references were taken off`, {
          cause: error,
        });
      }
      throw error;
    }
    session.changed(`PersistentVolumeClaim/${name} no longer owned by its StatefulSet`, { claim: name });
    released.push(claim);
  }
  return released;
}

function uniqueByName<T extends KubeObject>(objects: readonly T[]): T[] {
  const byName = new Map<string, T>();
  for (const object of objects) {
    const name = object.metadata.name ?? "";
    if (!byName.has(name)) byName.set(name, object);
  }
  return [...byName.values()];
}

function sortedByName<T extends KubeObject>(objects: readonly T[]): T[] {
  return [...objects].sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1));
}

/**
 * The reclaim policy, read without trusting the spec (it may be invalid by now): only an explicit "Delete"
 * deletes data; anything else keeps it.
 */
function reclaimPolicy(spec: unknown): "Retain" | "Delete" {
  const value =
    typeof spec === "object" && spec !== null ? (spec as Record<string, unknown>)["storageReclaimPolicy"] : undefined;
  return value === "Delete" ? "Delete" : "Retain";
}
