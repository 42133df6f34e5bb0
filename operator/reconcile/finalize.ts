/**
 * The finalizer of an instance: put on before anything is made for it, and on deletion (the finalize step) delete
 * the children it controls, keep its volume claims unless its storageReclaimPolicy is Delete (no data is deleted
 * implicitly), then remove the finalizer so the apiserver can let the instance go. Nothing here waits: the garbage
 * collector and the claims' own protection finalizer finish the job after us.
 */
import { finalizer } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { governingServiceName, isControlledBy, selectorString, serviceName, workloadName } from "../desired/index.ts";
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
  const { metadata } = session.instance;
  const finalizers = metadata.finalizers ?? [];
  if (finalizers.includes(finalizer)) return;
  await session.cluster.setFinalizers({ ...session.key, resourceVersion: metadata.resourceVersion ?? "" }, [
    ...finalizers,
    finalizer,
  ]);
  session.changed("finalizer added", { finalizer });
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

  const claims = dataClaims(
    await cluster.list<ObservedClaim>("v1", "PersistentVolumeClaim", key.namespace, selectorString(key.name)),
    workloadName(key.name),
  ).filter((claim) => !claim.metadata.deletionTimestamp);
  if (claims.length > 0) {
    const names = claims.map((claim) => claim.metadata.name ?? "").join(", ");
    if (reclaimPolicy(instance.spec) === "Delete") {
      for (const claim of claims) {
        await cluster.delete("v1", "PersistentVolumeClaim", claim.metadata.name ?? "", key.namespace, {
          propagationPolicy: "Background",
          ...(claim.metadata.uid ? { preconditionUid: claim.metadata.uid } : {}),
        });
      }
      await session.event(
        "Normal",
        "DeletedVolumeClaims",
        "Delete",
        `Deleted volume claims ${names} (storageReclaimPolicy: Delete)`,
      );
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
  await cluster.setFinalizers(
    { ...key, resourceVersion: instance.metadata.resourceVersion ?? "" },
    finalizers.filter((name) => name !== finalizer),
  );
  await session.event("Normal", "Finalized", "Delete", `Cleaned up; removed the finalizer ${finalizer}`);
  session.logger.info({ claimsKept: reclaimPolicy(instance.spec) !== "Delete" ? claims.length : 0 }, "finalized");
  return {};
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
