/**
 * What the operator process watches (and so caches): only objects carrying its managed-by label, which keeps
 * unrelated workloads out of memory. Events of owned kinds wake the instance that controls the object. A label is
 * no proof (anyone who may create an object may set it), nor is a controller reference (a tenant may name their
 * own instance, uid and all): of an owned object the cache keeps whole only a child of the built-in template, by
 * its name, and an object its instance's current render names, at about the size the render makes it
 * (operator/chart/rendered-children.ts); of anything else its identity, of a StatefulSet an instance controls what
 * the finalizer reads, and of a volume claim only what reconciles read: the memory a tenant's labelled objects
 * cost the operator every namespace shares does not grow with their size.
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
import type { KubeObject, OwnerReference } from "../kube/index.ts";
import {
  chartInstanceLabel,
  contentBytes,
  isContentWithheld,
  objectId,
  withheld,
  type RenderedChildren,
} from "./chart/index.ts";
import { labelKeys, managedBy } from "./desired/index.ts";
import type { ObservedClaim } from "./reconcile/index.ts";
import {
  contentIfControlled,
  identityOnly,
  type NamespaceLimit,
  type Synced,
  type WatchedKind,
} from "./runtime/index.ts";

/** Only our children: the label every desired object carries keeps unrelated workloads out of memory. */
const ours = `${labelKeys.managedBy}=${managedBy}`;

/** The labels a reconcile reads on an object it does not control: ours, and those the cache indexes. */
const identityLabels = [labelKeys.managedBy, labelKeys.name, labelKeys.instance, chartInstanceLabel] as const;

type Kind = { readonly apiVersion: string; readonly kind: string };

const deployment: Kind = { apiVersion: "apps/v1", kind: "Deployment" };
const statefulSet: Kind = { apiVersion: "apps/v1", kind: "StatefulSet" };
const service: Kind = { apiVersion: "v1", kind: "Service" };

/**
 * The most the cache keeps whole of a child named as the built-in template names them: 4–6 KiB as the template
 * makes one with the server's defaults and status, so past this someone else wrote the rest (or made the object,
 * controller reference and all); the reconcile reads it live (operator/reconcile/cluster-client.ts). Anyone who may
 * edit the instance's children may pad them: at 256 KiB each, 120 instances whose Deployment and Services a tenant
 * padded took 114 MiB of the operator's heap, and killed one of 96 MiB at every start; at this, ~12 MiB.
 */
export const maxTemplateChildBytes = 32 * 1024;

/** What the cache keeps of an object it does not keep whole: its identity, marked so. */
const identity = (object: KubeObject) => withheld(identityOnly(object, identityLabels));

/**
 * The transforms of what the cache keeps of `type`: an object an instance controls and keeps in sync whole
 * (without managedFields), any other as `otherwise` makes it (its identity). An instance keeps in sync a child of
 * its template by the names it gives them (api/child-names.ts, `names`), and an object of its chart that its
 * current render names (the chart label alone is anyone's to set; `rendered` says what the render names).
 */
function keptOf(
  type: Kind,
  rendered: RenderedChildren,
  names: (instanceName: string) => readonly string[] = () => [],
  otherwise: (object: KubeObject, controller: OwnerReference | undefined) => KubeObject = identity,
): (object: KubeObject) => KubeObject {
  const synced: Synced = (object, controller) =>
    (names(controller.name).includes(object.metadata.name ?? "") && contentBytes(object) <= maxTemplateChildBytes) ||
    (object.metadata.labels?.[chartInstanceLabel] === labelValue(controller.name) &&
      rendered.keeps(
        object.metadata.namespace ?? "",
        controller.name,
        controller.uid,
        objectId({ ...type, metadata: object.metadata }),
        object,
      ));
  return contentIfControlled({ apiVersion, kind }, identityLabels, synced, undefined, otherwise);
}

/**
 * At most `maxObjects` objects a namespace's cache keeps only in part (identities: objects no instance keeps whole)
 * of a kind: anyone in the namespace may make them, and past that the namespace is read live (heap-budgets.ts).
 * Unbounded without a number (tests, tools).
 */
function partialLimit(maxObjects: number | undefined): { namespaceLimit?: NamespaceLimit } {
  return maxObjects === undefined ? {} : { namespaceLimit: { maxObjects, counts: isContentWithheld } };
}

/**
 * The kinds the built-in template makes; their events are mapped back to the owning instance. A StatefulSet an
 * instance controls but does not keep whole (not of its current render, or before it rendered since a start) is
 * kept as {@link statefulSetAsRead}: deleting the instance reads its claim retention, and no render comes then.
 */
function ownedKinds(rendered: RenderedChildren, maxPartial: number | undefined): WatchedKind[] {
  const limit = partialLimit(maxPartial);
  return [
    {
      ...deployment,
      labelSelector: ours,
      transform: keptOf(deployment, rendered, (name) => [workloadName(name)]),
      ...limit,
    },
    {
      ...statefulSet,
      labelSelector: ours,
      ...limit,
      transform: keptOf(
        statefulSet,
        rendered,
        (name) => [workloadName(name)],
        (object, controller) => (controller ? withheld(statefulSetAsRead(object)) : identity(object)),
      ),
    },
    {
      ...service,
      labelSelector: ours,
      transform: keptOf(service, rendered, (name) => [serviceName(name), governingServiceName(name)]),
      ...limit,
    },
  ];
}

/**
 * The owned kinds plus every kind charts may render (the platform's allow-list) that the operator may read: a
 * ConfigMap or Ingress a chart rendered and someone edited by hand wakes its instance at once, which applies the
 * render again. Secrets are write-only (the operator never reads credentials), so they are not watched. `rendered`:
 * each instance's current render, which the chart step records (the same as the chart step's, operator/main.ts).
 * `maxPartialPerNamespace`: how many objects of a kind a namespace's cache keeps in part (heap-budgets.ts).
 */
export function watchedOwnedKinds(
  chartKinds: readonly ChartKind[],
  rendered: RenderedChildren,
  maxPartialPerNamespace?: number,
): WatchedKind[] {
  const kinds = ownedKinds(rendered, maxPartialPerNamespace);
  for (const kind of chartKinds) {
    if (kind.writeOnly) continue;
    if (kinds.some((known) => known.apiVersion === kind.apiVersion && known.kind === kind.kind)) continue;
    kinds.push({
      apiVersion: kind.apiVersion,
      kind: kind.kind,
      labelSelector: ours,
      transform: keptOf({ apiVersion: kind.apiVersion, kind: kind.kind }, rendered),
      ...partialLimit(maxPartialPerNamespace),
    });
  }
  return kinds;
}

/** The most claim templates {@link statefulSetAsRead} keeps: more would let a tenant's StatefulSet weigh again. */
const keptClaimTemplates = 16;

/** Names, sizes and policies are short where they are valid; a longer one is cut (it only names claims). */
const longestText = 253;

/**
 * A StatefulSet as the finalizer (operator/reconcile/claim-owners.ts: claim retention, its observed generation,
 * the claims its templates name) and volume safety (a StatefulSet a render drops keeps volumes) read it: its
 * identity, generation, `persistentVolumeClaimRetentionPolicy`, the names and sizes of its first
 * {@link keptClaimTemplates} claim templates and `status.observedGeneration`. A few hundred bytes whatever it weighs.
 */
export function statefulSetAsRead(object: KubeObject): KubeObject {
  const spec = object["spec"] as
    | {
        persistentVolumeClaimRetentionPolicy?: { whenDeleted?: unknown; whenScaled?: unknown };
        volumeClaimTemplates?: unknown;
      }
    | undefined;
  const observedGeneration = (object["status"] as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  const text = (value: unknown) => (typeof value === "string" ? { value: value.slice(0, longestText) } : undefined);
  const policy = spec?.persistentVolumeClaimRetentionPolicy;
  const whenDeleted = text(policy?.whenDeleted);
  const whenScaled = text(policy?.whenScaled);
  const templates = Array.isArray(spec?.volumeClaimTemplates) ? (spec.volumeClaimTemplates as unknown[]) : [];
  const kept = identityOnly(object, identityLabels);
  const { generation } = object.metadata;
  return {
    ...kept,
    metadata: { ...kept.metadata, ...(typeof generation === "number" ? { generation } : {}) },
    spec: {
      ...(policy
        ? {
            persistentVolumeClaimRetentionPolicy: {
              ...(whenDeleted ? { whenDeleted: whenDeleted.value } : {}),
              ...(whenScaled ? { whenScaled: whenScaled.value } : {}),
            },
          }
        : {}),
      volumeClaimTemplates: templates.slice(0, keptClaimTemplates).map((template) => {
        const claim = template as
          { metadata?: { name?: unknown }; spec?: { resources?: { requests?: { storage?: unknown } } } } | undefined;
        const name = text(claim?.metadata?.name);
        const storage = text(claim?.spec?.resources?.requests?.storage);
        return {
          metadata: name ? { name: name.value } : {},
          ...(storage ? { spec: { resources: { requests: { storage: storage.value } } } } : {}),
        };
      }),
    },
    ...(typeof observedGeneration === "number" ? { status: { observedGeneration } } : {}),
  };
}

/**
 * A volume claim as reconciles read it (ObservedClaim): its identity and creation time (the apiserver's: the
 * finalizer deletes under Delete only the claims made since its instance was), class, requested size and resize
 * status. The StatefulSet controller makes them and no instance controls them, so a tenant's claim with our label
 * looks the same; its annotations, selector or other labels are never kept.
 */
export function claimAsRead(object: KubeObject): ObservedClaim {
  const claim = object as ObservedClaim;
  const storage = claim.spec?.resources?.requests?.storage;
  const status = claim.status;
  const identity = identityOnly(object, identityLabels);
  const created = object.metadata.creationTimestamp;
  return {
    ...identity,
    metadata: { ...identity.metadata, ...(created === undefined ? {} : { creationTimestamp: created }) },
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

/**
 * Read by reconcile but owned by no instance: the StatefulSet controller creates the volume claims. Each is kept
 * in part, so a namespace keeps at most `maxPartialPerNamespace` of them (heap-budgets.ts).
 */
export function cachedKinds(maxPartialPerNamespace?: number): WatchedKind[] {
  return [
    {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      labelSelector: ours,
      transform: claimAsRead,
      ...(maxPartialPerNamespace === undefined
        ? {}
        : { namespaceLimit: { maxObjects: maxPartialPerNamespace, counts: () => true } }),
    },
  ];
}

/**
 * The labels the cache indexes: reconcile lists an instance's objects by them (every reconcile looks for objects a
 * chart rendered, and for volume claims), which without an index would scan the whole fleet's cache each time.
 */
export const indexedLabels = [labelKeys.instance, chartInstanceLabel] as const;
