/**
 * The narrow client between the reconciler and Kubernetes (as controller-runtime's client.Client): the handful of
 * calls one reconcile makes, nothing more. The reconcile logic is tested against a recording fake of this client
 * (asserting the exact writes); `clusterClient` implements it for the real thing: reads from the informers' cache
 * where it covers the kind (as controller-runtime's cached client), writes over kube/client.ts, events through the
 * runtime's recorder.
 */
import { apiVersion as instanceApiVersion, kind as instanceKind, type MyAppInstanceStatus } from "../../api/index.ts";
import { realClock, type Clock, type KubeClient, type KubeObject } from "../../kube/index.ts";
import type { ObjectKey } from "../../kube/object-key.ts";
import type { ApplyConfiguration, JsonPatchOperation, ObjectClient } from "../../kube/object-client.ts";
import type { EventRecord } from "../runtime/event.ts";
import { isContentWithheld } from "../chart/index.ts";
import { boundedLiveList } from "./live-lists.ts";

export type { EventRecord, ObjectReference } from "../runtime/event.ts";
export type { ObjectKey } from "../../kube/object-key.ts";
export type { ApplyConfiguration, DeleteOptions, JsonPatchOperation, ObjectClient } from "../../kube/object-client.ts";

/** The field manager of every server-side apply the operator makes (`kubectl get -o yaml --show-managed-fields`). */
export const fieldManager = "myapp-operator";

/** `reportingController` of the operator's events. */
export const reportingController = "example.com/myapp-operator";

/**
 * The object calls (kube/object-client.ts: find and list read from the informers' cache when it covers the kind,
 * applies and creates with `fieldManager`), plus the instance's own writes and its events.
 */
export interface ClusterClient extends ObjectClient {
  /** Server-side apply of the instance's status subresource. */
  applyStatus(instance: ObjectKey, status: MyAppInstanceStatus): Promise<void>;
  /**
   * Changes the instance's finalizers from `instance.finalizers`, as stored at `resourceVersion`, to `finalizers`,
   * only if it is still at that version (ConflictError otherwise), so a finalizer someone else added in between is
   * never dropped. Sends the change only (one added at the end, one removed): a tenant's long list is not sent back.
   */
  setFinalizers(
    instance: ObjectKey & { readonly resourceVersion: string; readonly finalizers: readonly string[] },
    finalizers: readonly string[],
  ): Promise<void>;
  /**
   * Records an event (deduplicated and rate-limited by the recorder). Best effort: a failure is logged, never
   * thrown, because events must not break a reconcile.
   */
  emitEvent(event: EventRecord): Promise<void>;
}

/** The read cache clusterClient uses (the runtime's informer cache satisfies it). */
export interface ReadCache {
  covers(apiVersion: string, kind: string, namespace?: string): boolean;
  get<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string): T | undefined;
  list<T extends KubeObject>(apiVersion: string, kind: string, namespace: string, labelSelector: string): T[];
  /** Remembers an object just written, so the next read does not miss it. */
  wrote(object: KubeObject): void;
  /**
   * What the cache keeps of an object of this kind (its informer's transform), or undefined for a kind it does not
   * watch: a live list of a watched kind (a namespace the cache stopped keeping) keeps no more than the cache would.
   */
  keptOf?(apiVersion: string, kind: string): ((object: KubeObject) => KubeObject) | undefined;
}

export interface ClusterClientOptions {
  /** Where reads come from when it covers the kind; live GETs otherwise. */
  readonly cache?: ReadCache;
  /** The event recorder (the runtime's EventRecorder satisfies it). */
  readonly events: { record(event: EventRecord): void };
  /** @default fieldManager */
  readonly fieldManager?: string;
  /**
   * How long a live read of a cluster-scoped kind the cache does not cover (StorageClasses) is reused. The
   * operator does not watch StorageClasses (its RBAC grants get and list only); without this, each new instance
   * with storage would cost a StorageClass list, and a fleet's creates a burst of them. A class created or
   * changed is seen this much later at most. 0 turns it off.
   * @default 10_000
   */
  readonly clusterReadTtlMs?: number;
  /** Measures how old a reused read is. @default realClock */
  readonly clock?: Clock;
}

/** The ClusterClient over a KubeClient: cached reads, server-side apply as `fieldManager`, recorded events. */
export function clusterClient(client: KubeClient, options: ClusterClientOptions): ClusterClient {
  const manager = options.fieldManager ?? fieldManager;
  const cache = options.cache;
  const remember = <T extends KubeObject>(object: T): T => {
    cache?.wrote(object);
    return object;
  };
  const reuse = reusedReads(options.clusterReadTtlMs ?? 10_000, options.clock ?? realClock);
  return {
    async find<T extends KubeObject>(
      apiVersion: string,
      kind: string,
      name: string,
      namespace?: string,
      options?: { readonly live?: boolean },
    ) {
      if (!options?.live && cache?.covers(apiVersion, kind, namespace)) {
        const cached = cache.get<T>(apiVersion, kind, name, namespace);
        // Of an object someone made large, the cache kept its identity (operator/watched-kinds.ts): read it whole.
        if (!cached || !isContentWithheld(cached)) return cached;
      }
      if (!namespace && !options?.live) {
        return reuse(`find ${apiVersion} ${kind} ${name}`, () => client.find<T>(apiVersion, kind, name));
      }
      return client.find<T>(apiVersion, kind, name, namespace);
    },
    async list<T extends KubeObject>(
      apiVersion: string,
      kind: string,
      namespace: string,
      labelSelector: string,
      fieldSelector?: string,
    ) {
      // The cache answers label selectors; a field selector (events of one object) goes to the apiserver.
      if (!fieldSelector && cache?.covers(apiVersion, kind, namespace)) {
        return cache.list<T>(apiVersion, kind, namespace, labelSelector);
      }
      // Read item by item, each kept in what the reconcile reads, within a budget (live-lists.ts says why).
      // What the cache would have answered (a label selector, a namespace it stopped keeping) is kept as the cache
      // keeps it: a tenant's labelled megabytes as identities; what a reconcile needs whole it reads by name. Any
      // other list (a field selector: an instance's finalizers, a StatefulSet's Events) as live-lists.ts keeps it.
      const keep = fieldSelector ? undefined : cache?.keptOf?.(apiVersion, kind);
      const live = () =>
        boundedLiveList<T>(client, apiVersion, kind, {
          namespace,
          labelSelector,
          ...(fieldSelector ? { fieldSelector } : {}),
          ...(keep ? { keep } : {}),
        });
      if (!namespace) return reuse(`list ${apiVersion} ${kind} ${labelSelector} ${fieldSelector ?? ""}`, live);
      return live();
    },
    // The configuration is a partial object by design (only our fields); the client sends it as it is.
    apply: async <T extends KubeObject>(object: ApplyConfiguration) =>
      remember(await client.apply<T>(object as unknown as KubeObject, { fieldManager: manager, force: true })),
    create: async <T extends KubeObject>(object: ApplyConfiguration) =>
      remember(await client.create<T>(object as unknown as T, { fieldManager: manager })),
    jsonPatch: async <T extends KubeObject>(
      apiVersion: string,
      kind: string,
      name: string,
      namespace: string,
      operations: readonly JsonPatchOperation[],
    ) => remember(await client.jsonPatch<T>(apiVersion, kind, name, namespace, operations)),
    async applyStatus(instance, status) {
      const body = {
        apiVersion: instanceApiVersion,
        kind: instanceKind,
        metadata: { name: instance.name, namespace: instance.namespace },
        status,
      };
      remember(await client.apply(body, { fieldManager: manager, force: true, subresource: "status" }));
    },
    async setFinalizers(instance, finalizers) {
      // A patch that sets resourceVersion is an optimistic-concurrency write: 409 if the object moved on.
      const operations: JsonPatchOperation[] = [
        { op: "replace", path: "/metadata/resourceVersion", value: instance.resourceVersion },
        ...finalizersChange(instance.finalizers, finalizers),
      ];
      remember(await client.jsonPatch(instanceApiVersion, instanceKind, instance.name, instance.namespace, operations));
    },
    delete: (apiVersion, kind, name, namespace, deleteOptions) =>
      client.delete(apiVersion, kind, name, namespace, {
        propagationPolicy: deleteOptions.propagationPolicy,
        ...(deleteOptions.preconditionUid ? { preconditionUid: deleteOptions.preconditionUid } : {}),
      }),
    async emitEvent(event) {
      options.events.record(event);
    },
  };
}

/**
 * A read-through memo: the same read within `ttlMs` gets the same answer (a read in flight is shared, a failed
 * one is forgotten at once). Hand-written: a dozen lines, and no cache library shares in-flight promises this way.
 */
function reusedReads(ttlMs: number, clock: Clock) {
  const reads = new Map<string, { readonly at: number; readonly value: Promise<unknown> }>();
  return <T>(key: string, read: () => Promise<T>): Promise<T> => {
    if (ttlMs <= 0) return read();
    const at = clock.monotonicMs();
    const known = reads.get(key);
    if (known && at - known.at < ttlMs) return known.value as Promise<T>;
    for (const [stale, entry] of reads) if (at - entry.at >= ttlMs) reads.delete(stale);
    const value = read();
    reads.set(key, { at, value });
    value.catch(() => reads.delete(key));
    return value;
  };
}

/**
 * The JSON patch operations that turn the finalizer list `from` into `to`: one added at the end or one removed is
 * that operation alone; anything else writes the whole list.
 */
export function finalizersChange(from: readonly string[], to: readonly string[]): JsonPatchOperation[] {
  const path = "/metadata/finalizers";
  const same = (a: readonly string[], b: readonly string[]) => a.every((name, i) => name === b[i]);
  if (to.length === from.length + 1 && from.length > 0 && same(from, to)) {
    return [{ op: "add", path: `${path}/-`, value: to[to.length - 1] }];
  }
  if (to.length === from.length - 1) {
    const removed = from.findIndex((name, i) => name !== to[i]);
    if (same(to, [...from.slice(0, removed), ...from.slice(removed + 1)])) {
      return [{ op: "remove", path: `${path}/${removed}` }];
    }
  }
  // "add" on a member that exists replaces it; the resourceVersion operation before it keeps that safe.
  return [{ op: "add", path, value: [...to] }];
}
