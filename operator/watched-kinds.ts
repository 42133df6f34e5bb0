/**
 * What the operator process watches (and so caches): only objects carrying its managed-by label, which keeps
 * unrelated workloads out of memory. Events of owned kinds wake the instance that controls the object. A label is
 * no proof (anyone who may create an object may set it), so of an owned object no instance controls the cache keeps
 * only its identity, and of a volume claim only what reconciles read: the memory a tenant's labelled objects cost
 * the operator every namespace shares does not grow with their size.
 */
import {
  apiVersion,
  governingServiceName,
  kind,
  labelValue,
  serviceName,
  workloadName,
  type ChartKind,
} from "../api/index.ts";
import type { KubeObject } from "../kube/index.ts";
import { chartInstanceLabel } from "./chart/index.ts";
import { labelKeys, managedBy } from "./desired/index.ts";
import type { ObservedClaim } from "./reconcile/index.ts";
import { contentIfControlled, identityOnly, type Synced, type WatchedKind } from "./runtime/index.ts";

/** Only our children: the label every desired object carries keeps unrelated workloads out of memory. */
const ours = `${labelKeys.managedBy}=${managedBy}`;

/** The labels a reconcile reads on an object it does not control: ours, and those the cache indexes. */
const identityLabels = [labelKeys.managedBy, labelKeys.name, labelKeys.instance, chartInstanceLabel] as const;

/** An object of the instance's chart: its label names the instance (what the render lacks, the chart prunes). */
const ofItsChart: Synced = (object, controller) =>
  object.metadata.labels?.[chartInstanceLabel] === labelValue(controller.name);

/** A child of the built-in template, by the names it gives them (api/child-names.ts), or an object of its chart. */
const templateChild =
  (names: (instanceName: string) => readonly string[]): Synced =>
  (object, controller) =>
    names(controller.name).includes(object.metadata.name ?? "") || ofItsChart(object, controller);

/**
 * Transforms of what the cache keeps: an object an instance controls and keeps in sync whole (without
 * managedFields), any other as its identity (runtime/cached-identity.ts).
 */
const chartContent = contentIfControlled({ apiVersion, kind }, identityLabels, ofItsChart);
const workloadContent = contentIfControlled(
  { apiVersion, kind },
  identityLabels,
  templateChild((name) => [workloadName(name)]),
);
const serviceContent = contentIfControlled(
  { apiVersion, kind },
  identityLabels,
  templateChild((name) => [serviceName(name), governingServiceName(name)]),
);

/** The kinds the built-in template makes; their events are mapped back to the owning instance. */
const ownedKinds = [
  { apiVersion: "apps/v1", kind: "Deployment", labelSelector: ours, transform: workloadContent },
  { apiVersion: "apps/v1", kind: "StatefulSet", labelSelector: ours, transform: workloadContent },
  { apiVersion: "v1", kind: "Service", labelSelector: ours, transform: serviceContent },
] as const;

/**
 * The owned kinds plus every kind charts may render (the platform's allow-list) that the operator may read: a
 * ConfigMap or Ingress a chart rendered and someone edited by hand wakes its instance at once, which applies the
 * render again. Secrets are write-only (the operator never reads credentials), so they are not watched.
 */
export function watchedOwnedKinds(chartKinds: readonly ChartKind[]): WatchedKind[] {
  const kinds: WatchedKind[] = [...ownedKinds];
  for (const kind of chartKinds) {
    if (kind.writeOnly) continue;
    if (kinds.some((known) => known.apiVersion === kind.apiVersion && known.kind === kind.kind)) continue;
    kinds.push({ apiVersion: kind.apiVersion, kind: kind.kind, labelSelector: ours, transform: chartContent });
  }
  return kinds;
}

/**
 * A volume claim as reconciles read it (ObservedClaim): its identity, class, requested size and resize status. The
 * StatefulSet controller makes them and no instance controls them, so a tenant's claim with our label looks the
 * same; its annotations, selector or other labels are never kept.
 */
export function claimAsRead(object: KubeObject): ObservedClaim {
  const claim = object as ObservedClaim;
  const storage = claim.spec?.resources?.requests?.storage;
  const status = claim.status;
  return {
    ...identityOnly(object, identityLabels),
    spec: {
      ...(claim.spec?.storageClassName === undefined ? {} : { storageClassName: claim.spec.storageClassName }),
      ...(storage === undefined ? {} : { resources: { requests: { storage } } }),
    },
    ...(status
      ? {
          status: {
            ...(status.phase === undefined ? {} : { phase: status.phase }),
            ...(status.capacity?.storage === undefined ? {} : { capacity: { storage: status.capacity.storage } }),
            ...(status.conditions === undefined
              ? {}
              : {
                  conditions: status.conditions.map(({ type, status, message }) => ({
                    ...(type === undefined ? {} : { type }),
                    ...(status === undefined ? {} : { status }),
                    ...(message === undefined ? {} : { message }),
                  })),
                }),
            ...(status.allocatedResourceStatuses === undefined
              ? {}
              : { allocatedResourceStatuses: status.allocatedResourceStatuses }),
          },
        }
      : {}),
  };
}

/** Read by reconcile but owned by no instance: the StatefulSet controller creates the volume claims. */
export const cachedKinds = [
  { apiVersion: "v1", kind: "PersistentVolumeClaim", labelSelector: ours, transform: claimAsRead },
] as const;

/**
 * The labels the cache indexes: reconcile lists an instance's objects by them (every reconcile looks for objects a
 * chart rendered, and for volume claims), which without an index would scan the whole fleet's cache each time.
 */
export const indexedLabels = [labelKeys.instance, chartInstanceLabel] as const;
