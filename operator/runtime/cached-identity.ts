/**
 * What a cache keeps of an object whose content no reconcile reads: who it is and whose it is.
 *
 * An informer filters by label selector, and anyone who may create an object may put any label on it: a tenant's
 * ConfigMaps carrying the operator's `managed-by` label are listed, watched and cached like the operator's own
 * children. Kept whole, 200 of 900 KiB each took an operator from 132 to 409 MiB, and a few more would kill the
 * process every namespace shares, again after each restart. An owned object that no primary controls can only be
 * someone else's: reconciles look at its name, its controller and its labels (whose a child's name is, never
 * taken over), never at its content, so that is all the cache keeps, a few hundred bytes whatever the object weighs.
 * A controller reference is no proof either, nor is a label: a tenant may name their own instance, uid and all, on
 * objects of their own, labelled as its chart's. So content is kept only of what the owner keeps in sync (`synced`:
 * a child of its template by its name, an object its chart's current render names, at about the size the render
 * makes it); of anything else, what `otherwise` keeps (by default the identity).
 */
import type { KubeObject, OwnerReference } from "../../kube/index.ts";
import { stripUnread } from "./informer.ts";
import { controllerOwnerRef, type OwnerType } from "./owner-mapping.ts";

/**
 * `object` reduced to its identity: apiVersion, kind, name, namespace, uid, resourceVersion, deletionTimestamp, its
 * controller reference (the only owner reference a reconcile looks at) and the labels of `labelKeys`.
 */
export function identityOnly(object: KubeObject, labelKeys: readonly string[]): KubeObject {
  const { name, namespace, uid, resourceVersion, deletionTimestamp, labels, ownerReferences } = object.metadata;
  const kept: Record<string, string> = {};
  for (const key of labelKeys) {
    const value = labels?.[key];
    if (typeof value === "string") kept[key] = value;
  }
  const controller = ownerReferences?.find((reference) => reference.controller === true);
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      ...(name === undefined ? {} : { name }),
      ...(namespace === undefined ? {} : { namespace }),
      ...(uid === undefined ? {} : { uid }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      ...(deletionTimestamp === undefined ? {} : { deletionTimestamp }),
      ...(Object.keys(kept).length > 0 ? { labels: kept } : {}),
      ...(controller ? { ownerReferences: [boundedReference(controller)] } : {}),
    },
  };
}

/** Names and kinds are at most 253 characters where they are valid; the apiserver checks an owner's only for being set. */
const longestName = 253;

function boundedReference(reference: OwnerReference): OwnerReference {
  const cut = (text: string) => (text.length > longestName ? text.slice(0, longestName) : text);
  return {
    apiVersion: cut(reference.apiVersion),
    kind: cut(reference.kind),
    name: cut(reference.name),
    uid: cut(reference.uid),
    controller: true,
  };
}

/** Whether the owner named by `controller` keeps `object` in sync, so that a reconcile reads its content. */
export type Synced = (object: KubeObject, controller: OwnerReference) => boolean;

/**
 * An informer transform for an owned kind: an object that an `owner` controls and keeps in sync (`synced`) is
 * kept as `keep` makes it (by default without managedFields), any other as `otherwise` makes it (given the
 * owner's controller reference, if any), by default its {@link identityOnly}: whatever `otherwise` keeps must not
 * grow with what a tenant writes.
 */
export function contentIfControlled(
  owner: OwnerType,
  labelKeys: readonly string[],
  synced: Synced,
  keep: (object: KubeObject) => KubeObject = stripUnread,
  otherwise: (object: KubeObject, controller: OwnerReference | undefined) => KubeObject = (object) =>
    identityOnly(object, labelKeys),
): (object: KubeObject) => KubeObject {
  return (object) => {
    const controller = controllerOwnerRef(object, owner);
    return controller && synced(object, controller) ? keep(object) : otherwise(object, controller);
  };
}
