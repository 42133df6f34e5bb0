/**
 * An informer's in-memory copy of the objects it watches, keyed "namespace/name". Applying a watch event or a
 * relist returns the notifications to deliver, so this part is pure and tested without a cluster.
 * Cost: the store holds every watched object in full (a few KB each); thousands of Deployments are tens of MB.
 *
 * Like client-go's Indexer, it can index objects by the values of chosen labels per namespace, so a list by such a
 * label reads the matching objects instead of scanning the store: a reconcile that lists its instance's children
 * by label would otherwise cost O(fleet), and a fleet's convergence O(fleet²) (at 10,000 instances, 73 % of the
 * operator's CPU went to that scan).
 */
import type { KubeObject } from "../../kube/index.ts";
import { formatObjectKey } from "../../kube/object-key.ts";

/** A change of the store, as delivered to informer handlers. */
export type StoreChange<T> =
  | { readonly type: "add"; readonly object: T }
  | { readonly type: "update"; readonly oldObject: T; readonly object: T }
  | { readonly type: "delete"; readonly object: T };

export interface ObjectStoreOptions {
  /** Label keys whose values are indexed per namespace (see `withLabel`). */
  readonly indexedLabels?: readonly string[];
  /** Which objects `countedIn` counts per namespace. @default none */
  readonly counted?: (object: KubeObject) => boolean;
}

export class ObjectStore<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexedLabels: ReadonlySet<string>;
  /** "namespace\nlabel=value" → keys of the objects that carry it. */
  private readonly index = new Map<string, Set<string>>();
  private readonly counted: (object: KubeObject) => boolean;
  /** namespace → how many of its objects `counted` counts. */
  private readonly counts = new Map<string, number>();

  constructor(options: ObjectStoreOptions = {}) {
    this.indexedLabels = new Set(options.indexedLabels ?? []);
    this.counted = options.counted ?? (() => false);
  }

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

  /** How many objects of `namespace` ("" for cluster-scoped) the `counted` option counts. */
  countedIn(namespace: string): number {
    return this.counts.get(namespace) ?? 0;
  }

  /** True when `label` is indexed, so `withLabel` can answer for it. */
  indexes(label: string): boolean {
    return this.indexedLabels.has(label);
  }

  /** The objects in `namespace` ("" for cluster-scoped) whose label `label` (an indexed one) is `value`. */
  withLabel(namespace: string, label: string, value: string): T[] {
    if (!this.indexedLabels.has(label)) throw new Error(`label ${label} is not indexed`);
    const keys = this.index.get(indexKey(namespace, label, value));
    if (!keys) return [];
    return [...keys].map((key) => this.objects.get(key)!);
  }

  /** Stores an added or modified object; an upsert, because a relist may already have delivered it. */
  upsert(object: T): StoreChange<T> {
    const key = formatObjectKey(object.metadata);
    const old = this.objects.get(key);
    this.objects.set(key, object);
    if (old) this.unindex(key, old);
    this.reindex(key, object);
    return old ? { type: "update", oldObject: old, object } : { type: "add", object };
  }

  /** Removes a deleted object; returns the change, or undefined when it was not stored. */
  remove(object: T): StoreChange<T> | undefined {
    const key = formatObjectKey(object.metadata);
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.objects.delete(key);
    this.unindex(key, old);
    // The DELETED event carries the final state; prefer it over our possibly older copy.
    return { type: "delete", object };
  }

  /**
   * Forgets every object of `namespace` without telling anyone: they still exist, the store just stops holding
   * them (an informer that no longer caches the namespace). Returns how many it forgot.
   */
  forgetNamespace(namespace: string): number {
    let forgotten = 0;
    for (const [key, object] of this.objects) {
      if ((object.metadata.namespace ?? "") !== namespace) continue;
      this.objects.delete(key);
      this.unindex(key, object);
      forgotten++;
    }
    return forgotten;
  }

  /**
   * Replaces the whole content with a fresh list (after a start or a 410) and returns what changed meanwhile:
   * new objects, objects with a new resourceVersion, and objects that vanished while we were not watching.
   * Objects of the `forgotten` namespaces (whose items the list did not keep) are dropped as `forgetNamespace`
   * drops them, not reported deleted.
   */
  replace(items: readonly T[], forgotten: ReadonlySet<string> = new Set()): StoreChange<T>[] {
    const changes: StoreChange<T>[] = [];
    const fresh = new Map<string, T>();
    for (const object of items) fresh.set(formatObjectKey(object.metadata), object);
    for (const [key, old] of this.objects) {
      if (!fresh.has(key) && !forgotten.has(old.metadata.namespace ?? "")) {
        changes.push({ type: "delete", object: old });
      }
    }
    for (const [key, object] of fresh) {
      const old = this.objects.get(key);
      if (!old) changes.push({ type: "add", object });
      else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) {
        changes.push({ type: "update", oldObject: old, object });
      }
    }
    this.objects.clear();
    this.index.clear();
    this.counts.clear();
    for (const [key, object] of fresh) {
      this.objects.set(key, object);
      this.reindex(key, object);
    }
    return changes;
  }

  private reindex(key: string, object: T): void {
    this.count(object, 1);
    for (const [label, value] of this.indexedLabelsOf(object)) {
      const at = indexKey(object.metadata.namespace ?? "", label, value);
      let keys = this.index.get(at);
      if (!keys) this.index.set(at, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, object: T): void {
    this.count(object, -1);
    for (const [label, value] of this.indexedLabelsOf(object)) {
      const at = indexKey(object.metadata.namespace ?? "", label, value);
      const keys = this.index.get(at);
      keys?.delete(key);
      if (keys?.size === 0) this.index.delete(at);
    }
  }

  private count(object: T, delta: 1 | -1): void {
    if (!this.counted(object)) return;
    const namespace = object.metadata.namespace ?? "";
    const count = (this.counts.get(namespace) ?? 0) + delta;
    if (count === 0) this.counts.delete(namespace);
    else this.counts.set(namespace, count);
  }

  private *indexedLabelsOf(object: T): Generator<[string, string]> {
    const labels = object.metadata.labels;
    if (!labels || this.indexedLabels.size === 0) return;
    for (const label of this.indexedLabels) {
      const value = labels[label];
      if (value !== undefined) yield [label, value];
    }
  }
}

function indexKey(namespace: string, label: string, value: string): string {
  return `${namespace}\n${label}=${value}`;
}
