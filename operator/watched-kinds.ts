/**
 * What the operator process watches (and so caches): only objects carrying its managed-by label, which keeps
 * unrelated workloads out of memory. Events of owned kinds wake the instance that controls the object.
 */
import type { ChartKind } from "../api/index.ts";
import { chartInstanceLabel } from "./chart/index.ts";
import { labelKeys, managedBy } from "./desired/index.ts";
import type { WatchedKind } from "./runtime/index.ts";

/** Only our children: the label every desired object carries keeps unrelated workloads out of memory. */
const ours = `${labelKeys.managedBy}=${managedBy}`;

/** The kinds the built-in template makes; their events are mapped back to the owning instance. */
const ownedKinds = [
  { apiVersion: "apps/v1", kind: "Deployment", labelSelector: ours },
  { apiVersion: "apps/v1", kind: "StatefulSet", labelSelector: ours },
  { apiVersion: "v1", kind: "Service", labelSelector: ours },
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
    kinds.push({ apiVersion: kind.apiVersion, kind: kind.kind, labelSelector: ours });
  }
  return kinds;
}

/** Read by reconcile but owned by no instance: the StatefulSet controller creates the volume claims. */
export const cachedKinds = [{ apiVersion: "v1", kind: "PersistentVolumeClaim", labelSelector: ours }] as const;

/**
 * The labels the cache indexes: reconcile lists an instance's objects by them (every reconcile looks for objects a
 * chart rendered, and for volume claims), which without an index would scan the whole fleet's cache each time.
 */
export const indexedLabels = [labelKeys.instance, chartInstanceLabel] as const;
