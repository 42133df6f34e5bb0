/**
 * The informers' stores as one cached reader, like controller-runtime's cached client: a reconcile reads the objects
 * the operator watches from memory instead of GETting them. Reads are as fresh as the watch, which is what a
 * level-based reconcile wants; a write based on a stale copy fails with 409 (optimistic concurrency) or is a
 * server-side apply that does not depend on the copy, and the runtime requeues it.
 *
 * One addition over controller-runtime: the cache remembers the objects this process itself wrote (the answer of
 * an apply or patch) until the watch delivers them, so the reconcile right after a write does not see its own
 * write missing and make it again. Newer is decided by resourceVersion, compared as integers (etcd's revisions);
 * the apiserver calls them opaque, so an unparsable one always defers to the watch. A write that deleted its object
 * (the last finalizer of one being deleted) is kept only until the store no longer has the object, and none is kept
 * longer than {@link keptWriteMs}: the watch delivers a write within seconds, and one it never delivers (its
 * object's deletion seen first, or the object deleted while the watch was away) must neither pass for a live object
 * nor stay in memory for the process's life.
 */
import { realClock, type Clock } from "../../kube/clock.ts";
import type { KubeObject } from "../../kube/index.ts";
import type { Informer } from "./informer.ts";
import { formatObjectKey } from "../../kube/object-key.ts";

/** What a reconcile may read from the cache. */
export interface CacheReader {
  /**
   * True when objects of this kind in this namespace are cached (else read them live): an informer of the kind
   * has synced and has not stopped caching the namespace (informer.ts, NamespaceLimit).
   */
  covers(apiVersion: string, kind: string, namespace?: string): boolean;
  /** The cached object, or undefined when it does not exist (as far as the watch knows). */
  get<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string): T | undefined;
  /** Cached objects of a kind in a namespace matching an equality label selector (`k=v,k2=v2`). */
  list<T extends KubeObject>(apiVersion: string, kind: string, namespace: string, labelSelector: string): T[];
  /** Remembers an object this process just wrote, until the watch has caught up with it. */
  wrote(object: KubeObject): void;
}

/** The longest an own write is kept waiting for the watch. */
export const keptWriteMs = 120_000;

export class InformerCache implements CacheReader {
  private readonly informers: readonly Informer[];
  private readonly clock: Clock;
  /** Own writes by key, oldest first (a key written again moves to the end). */
  private readonly written = new Map<string, { readonly object: KubeObject; readonly at: number }>();

  constructor(informers: readonly Informer[], clock: Clock = realClock) {
    this.informers = informers;
    this.clock = clock;
    // Forget an own write once the watch has delivered it (or something newer), or the object's deletion.
    for (const informer of informers) {
      const caughtUp = (object: KubeObject) => {
        const key = this.writtenKey(
          informer.apiVersion,
          informer.kind,
          object.metadata.name,
          object.metadata.namespace,
        );
        const own = this.written.get(key);
        if (own && !isNewer(own.object, object)) this.written.delete(key);
      };
      informer.addHandlers({
        onAdd: caughtUp,
        onUpdate: (_old, object) => caughtUp(object),
        onDelete: (object) =>
          this.written.delete(
            this.writtenKey(informer.apiVersion, informer.kind, object.metadata.name, object.metadata.namespace),
          ),
      });
    }
  }

  covers(apiVersion: string, kind: string, namespace?: string): boolean {
    return this.informerFor(apiVersion, kind, namespace) !== undefined;
  }

  get<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string): T | undefined {
    const key = formatObjectKey({ namespace, name });
    const stored = this.informerFor(apiVersion, kind, namespace)?.store.get(key) as T | undefined;
    const writtenKey = this.writtenKey(apiVersion, kind, name, namespace);
    const own = this.written.get(writtenKey);
    if (!own) return stored;
    if ((stored && !isNewer(own.object, stored)) || this.clock.monotonicMs() - own.at > keptWriteMs) {
      this.written.delete(writtenKey);
      return stored;
    }
    // The answer to removing the last finalizer of an object being deleted: the apiserver deleted it, and the
    // watch has said so too once the store no longer has it (its deletion may come before the answer).
    if (!stored && isDeleted(own.object)) {
      this.written.delete(writtenKey);
      return undefined;
    }
    return own.object as T;
  }

  list<T extends KubeObject>(apiVersion: string, kind: string, namespace: string, labelSelector: string): T[] {
    const informer = this.informerFor(apiVersion, kind, namespace);
    if (!informer) return [];
    const wanted = parseSelector(labelSelector);
    const { store } = informer;
    // An indexed label narrows the candidates to the matching objects; without one, every object is a candidate.
    const indexed = wanted.find(([key]) => store.indexes(key));
    const candidates = indexed ? store.withLabel(namespace, indexed[0], indexed[1]) : store.list();
    return candidates
      .filter((object) => (object.metadata.namespace ?? "") === namespace && matches(object.metadata.labels, wanted))
      .map((object) => this.get<T>(apiVersion, kind, object.metadata.name ?? "", namespace) ?? (object as T));
  }

  /**
   * Stores again, through its informer's transform, each object in `namespace` whose indexed label `label` is
   * `value` (own writes kept for it included): what the transform keeps of them changed while they did not (a
   * chart render's objects no longer kept whole), and no watch event would bring that to them. Nothing is told to
   * the handlers: the objects are the same.
   */
  transformAgain(namespace: string, label: string, value: string): void {
    for (const informer of this.informers) {
      if (!informer.store.indexes(label)) continue;
      for (const object of informer.store.withLabel(namespace, label, value)) {
        informer.store.upsert(informer.transform(object));
      }
    }
    for (const [key, own] of this.written) {
      const { object } = own;
      if ((object.metadata.namespace ?? "") !== namespace || object.metadata.labels?.[label] !== value) continue;
      const informer = this.informerFor(object.apiVersion, object.kind, namespace);
      if (informer) this.written.set(key, { ...own, object: informer.transform(object) });
    }
  }

  wrote(object: KubeObject): void {
    const { name, namespace } = object.metadata;
    const informer = this.informerFor(object.apiVersion, object.kind, namespace);
    if (!name || !informer) return;
    const now = this.clock.monotonicMs();
    for (const [key, { at }] of this.written) {
      if (now - at <= keptWriteMs) break;
      this.written.delete(key);
    }
    const key = this.writtenKey(object.apiVersion, object.kind, name, namespace);
    this.written.delete(key);
    // Kept as the informer keeps what it stores: nothing a tenant made large, and read the same way.
    this.written.set(key, { object: informer.transform(object), at: now });
  }

  /** What the cache keeps of an object of this kind (its informer's transform); undefined for a kind not watched. */
  keptOf(apiVersion: string, kind: string): ((object: KubeObject) => KubeObject) | undefined {
    return this.informers.find((i) => i.apiVersion === apiVersion && i.kind === kind)?.transform;
  }

  /** Own writes kept (for tests of the bound). */
  get keptWrites(): number {
    return this.written.size;
  }

  private writtenKey(apiVersion: string, kind: string, name: string | undefined, namespace: string | undefined) {
    return `${apiVersion}/${kind}/${formatObjectKey({ namespace, name })}`;
  }

  private informerFor(apiVersion: string, kind: string, namespace?: string): Informer | undefined {
    return this.informers.find(
      (i) =>
        i.apiVersion === apiVersion &&
        i.kind === kind &&
        (i.namespace === undefined || i.namespace === namespace) &&
        i.hasSynced() &&
        i.covers(namespace),
    );
  }
}

/** Being deleted with no finalizer left: the apiserver has removed it. */
function isDeleted(object: KubeObject): boolean {
  return object.metadata.deletionTimestamp !== undefined && !object.metadata.finalizers?.length;
}

function isNewer(a: KubeObject, b: KubeObject): boolean {
  const x = a.metadata.resourceVersion;
  const y = b.metadata.resourceVersion;
  if (!x || !y || !/^\d+$/.test(x) || !/^\d+$/.test(y)) return false;
  return BigInt(x) > BigInt(y);
}

/** Parses an equality-based selector; set-based selectors are not needed by any caller and are refused. */
function parseSelector(selector: string): [string, string][] {
  if (!selector.trim()) return [];
  return selector.split(",").map((term) => {
    const match = /^\s*([^=!\s]+)\s*==?\s*([^=!\s]*)\s*$/.exec(term);
    if (!match) throw new Error(`label selector term "${term}" is not key=value (only equality is supported)`);
    return [match[1]!, match[2]!];
  });
}

function matches(labels: Record<string, string> | undefined, wanted: readonly [string, string][]): boolean {
  return wanted.every(([key, value]) => labels?.[key] === value);
}
