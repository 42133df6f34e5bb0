/**
 * Informer handlers that turn events into work-queue keys: the primary kind enqueues itself, owned kinds enqueue
 * their controlling owner. A key is all a reconcile gets (level-based), so handlers never pass objects on. What an
 * informer's first list brings is enqueued at low priority (workqueue.ts): it is the cache filling, not news.
 */
import type { KubeObject } from "../../kube/index.ts";
import type { InformerHandlers } from "./informer.ts";
import type { Priority } from "./workqueue.ts";
import { objectKeyOf, sameObjectKey, type ObjectKey } from "../../kube/object-key.ts";
import { controllerOwnerKey, type OwnerType } from "./owner-mapping.ts";

/**
 * Informer handlers for an owned kind that enqueue the owner's key on every add, update and delete. An update that
 * moves the object to another owner enqueues both, so the old owner notices what it lost.
 */
export function enqueueOwner<T extends KubeObject>(
  owner: OwnerType,
  enqueue: (key: ObjectKey, priority: Priority) => void,
): InformerHandlers<T> {
  const enqueueFor = (object: T, priority: Priority = "normal") => {
    const key = controllerOwnerKey(object, owner);
    if (key !== undefined) enqueue(key, priority);
  };
  return {
    onAdd: (object, initialList) => enqueueFor(object, initialList ? "low" : "normal"),
    onUpdate: (oldObject, newObject) => {
      const oldKey = controllerOwnerKey(oldObject, owner);
      const newKey = controllerOwnerKey(newObject, owner);
      if (oldKey !== undefined && (newKey === undefined || !sameObjectKey(oldKey, newKey))) enqueue(oldKey, "normal");
      if (newKey !== undefined) enqueue(newKey, "normal");
    },
    onDelete: (object) => enqueueFor(object),
  };
}

/** Informer handlers for the primary kind: every add, update and delete enqueues the object's own key. */
export function enqueueObject<T extends KubeObject>(
  enqueue: (key: ObjectKey, priority: Priority) => void,
  shouldEnqueueUpdate: (oldObject: T, newObject: T) => boolean = () => true,
): InformerHandlers<T> {
  return {
    onAdd: (object, initialList) => enqueue(objectKeyOf(object.metadata), initialList ? "low" : "normal"),
    onUpdate: (oldObject, newObject) => {
      if (shouldEnqueueUpdate(oldObject, newObject)) enqueue(objectKeyOf(newObject.metadata), "normal");
    },
    onDelete: (object) => enqueue(objectKeyOf(object.metadata), "normal"),
  };
}

/**
 * An update filter for the primary kind: skip updates that changed only status (and managedFields or
 * resourceVersion), i.e. the operator's own status writes, so they do not trigger another reconcile. Spec changes
 * bump metadata.generation; labels, annotations, finalizers, ownerReferences and deletionTimestamp are compared
 * directly because they do not.
 */
export function specOrMetadataChanged(oldObject: KubeObject, newObject: KubeObject): boolean {
  const a = oldObject.metadata;
  const b = newObject.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    a.uid !== b.uid ||
    !sameJson(a.labels, b.labels) ||
    !sameJson(a.annotations, b.annotations) ||
    !sameJson(a.finalizers, b.finalizers) ||
    !sameJson(a.ownerReferences, b.ownerReferences)
  );
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
