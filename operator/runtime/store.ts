/**
 * An informer's in-memory copy of the objects it watches, keyed "namespace/name". Applying a watch event or a
 * relist returns the notifications to deliver, so this part is pure and tested without a cluster.
 * Cost: the store holds every watched object in full (a few KB each); thousands of Deployments are tens of MB.
 */
import type { KubeObject } from "../../kube/index.ts";
import { objectKey } from "./object-key.ts";

/** A change of the store, as delivered to informer handlers. */
export type StoreChange<T> =
  | { readonly type: "add"; readonly object: T }
  | { readonly type: "update"; readonly oldObject: T; readonly object: T }
  | { readonly type: "delete"; readonly object: T };

export class ObjectStore<T extends KubeObject> {
  private readonly objects = new Map<string, T>();

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  keys(): IterableIterator<string> {
    return this.objects.keys();
  }

  get size(): number {
    return this.objects.size;
  }

  /** Stores an added or modified object; an upsert, because a relist may already have delivered it. */
  upsert(object: T): StoreChange<T> {
    const key = objectKey(object.metadata);
    const old = this.objects.get(key);
    this.objects.set(key, object);
    return old ? { type: "update", oldObject: old, object } : { type: "add", object };
  }

  /** Removes a deleted object; returns the change, or undefined when it was not stored. */
  remove(object: T): StoreChange<T> | undefined {
    const key = objectKey(object.metadata);
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.objects.delete(key);
    // The DELETED event carries the final state; prefer it over our possibly older copy.
    return { type: "delete", object };
  }

  /**
   * Replaces the whole content with a fresh list (after a start or a 410) and returns what changed meanwhile:
   * new objects, objects with a new resourceVersion, and objects that vanished while we were not watching.
   */
  replace(items: readonly T[]): StoreChange<T>[] {
    const changes: StoreChange<T>[] = [];
    const fresh = new Map<string, T>();
    for (const object of items) fresh.set(objectKey(object.metadata), object);
    for (const [key, old] of this.objects) {
      if (!fresh.has(key)) changes.push({ type: "delete", object: old });
    }
    for (const [key, object] of fresh) {
      const old = this.objects.get(key);
      if (!old) changes.push({ type: "add", object });
      else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) {
        changes.push({ type: "update", oldObject: old, object });
      }
    }
    this.objects.clear();
    for (const [key, object] of fresh) this.objects.set(key, object);
    return changes;
  }
}
