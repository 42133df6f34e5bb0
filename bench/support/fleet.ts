/**
 * A fleet of N application instances in one namespace, created and changed by the benchmark, and followed by a
 * watch that knows, for every member, the image it is Ready at. Two kinds of fleet share that shape:
 * - `instanceFleet`: MyAppInstances, made Ready by an operator;
 * - `floorFleet`: the same children (Service + Deployment or StatefulSet) created directly, without any operator:
 *   the floor of what the cluster itself takes.
 */
import {
  apiVersion,
  findCondition,
  kind,
  myAppInstanceSpecSchema,
  type MyAppInstanceSpec,
  type MyAppInstanceStatus,
} from "../../api/index.ts";
import type { KubeClient, KubeObject, WatchEvent } from "../../kube/index.ts";
import { desiredService, desiredWorkload } from "../../operator/desired/index.ts";
import type { ObservedWorkload } from "../../operator/reconcile/observed.ts";
import { rolloutProgress } from "../../operator/reconcile/rollout.ts";
import { benchFieldManager } from "./cluster.ts";
import { follow } from "./watch.ts";

type Instance = KubeObject & { spec: MyAppInstanceSpec; status?: MyAppInstanceStatus };

export interface FleetSpec {
  readonly replicas: number;
  readonly image: string;
  /** A storage quantity (StatefulSet with a claim per replica), or undefined (Deployment). */
  readonly storage: string | undefined;
}

export interface Fleet {
  /** What the watch follows: `MyAppInstance`, or the workload kind for the floor. */
  readonly watched: { readonly apiVersion: string; readonly kind: string };
  /** The image a watched object is Ready at, or undefined while it is not Ready at its spec. */
  readyImage(object: KubeObject): string | undefined;
  create(name: string): Promise<void>;
  setImage(name: string, image: string): Promise<void>;
}

/** The instance's spec, as the apiserver defaults it. */
function instanceSpec(spec: FleetSpec): MyAppInstanceSpec {
  return myAppInstanceSpecSchema.parse({
    replicas: spec.replicas,
    image: spec.image,
    ...(spec.storage ? { storage: spec.storage, storageReclaimPolicy: "Delete" } : {}),
  });
}

export function instanceFleet(client: KubeClient, namespace: string, spec: FleetSpec): Fleet {
  return {
    watched: { apiVersion, kind },
    readyImage(object) {
      const { metadata, spec: desired, status } = object as Instance;
      const generation = metadata.generation;
      if (!status || status.observedGeneration !== generation) return undefined;
      const ready = findCondition(status.conditions, "Ready");
      if (ready?.status !== "True") return undefined;
      if (ready.observedGeneration !== generation || status.image !== desired.image) return undefined;
      return status.image;
    },
    async create(name) {
      await client.create({
        apiVersion,
        kind,
        metadata: { name, namespace },
        spec: {
          replicas: spec.replicas,
          image: spec.image,
          // Delete: the namespace's deletion at the end of a run takes the claims with it.
          ...(spec.storage ? { storage: spec.storage, storageReclaimPolicy: "Delete" } : {}),
        },
      });
    },
    async setImage(name, image) {
      await client.mergePatch(apiVersion, kind, name, namespace, { spec: { image } });
    },
  };
}

export function floorFleet(client: KubeClient, namespace: string, spec: FleetSpec): Fleet {
  const desiredSpec = instanceSpec(spec);
  const workloadKind = spec.storage ? "StatefulSet" : "Deployment";
  // No ownerReferences: there is no owner, and the garbage collector would delete children of a missing one.
  const unowned = <T extends { metadata: object }>(object: T) =>
    ({ ...object, metadata: { ...object.metadata, ownerReferences: undefined } }) as unknown as KubeObject;
  return {
    watched: { apiVersion: "apps/v1", kind: workloadKind },
    readyImage(object) {
      const progress = rolloutProgress(object as ObservedWorkload, spec.replicas);
      return progress.complete ? progress.image : undefined;
    },
    async create(name) {
      const input = { metadata: { name, namespace, uid: "" }, spec: desiredSpec };
      await client.create(unowned(desiredService(input)), { fieldManager: benchFieldManager });
      await client.create(unowned(desiredWorkload(input)), { fieldManager: benchFieldManager });
    },
    async setImage(name, image) {
      await client.jsonPatch("apps/v1", workloadKind, name, namespace, [
        { op: "replace", path: "/spec/template/spec/containers/0/image", value: image },
      ]);
    },
  };
}

/**
 * Follows a fleet's watched kind in its namespace and keeps, per member, the image it is Ready at, with a count
 * per image, so "all N Ready at image X" is a lookup, and a wait resolves at the moment of the event that made it
 * true (not at the next poll).
 */
export class Readiness {
  private readonly readyAt = new Map<string, string | undefined>();
  private readonly countByImage = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  private readonly fleet: Fleet;

  constructor(fleet: Fleet) {
    this.fleet = fleet;
  }

  /** Starts following from `resourceVersion` until `signal` aborts; rejects if the record would have a hole. */
  follow(client: KubeClient, namespace: string, resourceVersion: string, signal: AbortSignal): Promise<void> {
    const { apiVersion: version, kind: watchedKind } = this.fleet.watched;
    return follow(client, version, watchedKind, { namespace, resourceVersion, signal }, (event) => this.observe(event));
  }

  observe(event: WatchEvent<KubeObject>): void {
    const name = event.object.metadata.name ?? "";
    const before = this.readyAt.get(name);
    const after = event.type === "DELETED" ? undefined : this.fleet.readyImage(event.object);
    if (before === after) return;
    if (before !== undefined) this.countByImage.set(before, (this.countByImage.get(before) ?? 1) - 1);
    if (after !== undefined) this.countByImage.set(after, (this.countByImage.get(after) ?? 0) + 1);
    this.readyAt.set(name, after);
    for (const waiter of this.waiters) waiter();
  }

  /** Members Ready at `image`. */
  count(image: string): number {
    return this.countByImage.get(image) ?? 0;
  }

  isReadyAt(name: string, image: string): boolean {
    return this.readyAt.get(name) === image;
  }

  /**
   * Resolves with performance.now() of the event that made `condition` true (at once if it already is); rejects
   * after `timeoutMs` or when `signal` aborts, naming `what`. `progress` is called every `progressMs`.
   */
  until(
    what: string,
    condition: () => boolean,
    options: { signal: AbortSignal; timeoutMs: number; progress?: () => void; progressMs?: number },
  ): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      if (condition()) return resolve(performance.now());
      const done = (settle: () => void) => {
        this.waiters.delete(check);
        clearTimeout(timer);
        clearInterval(ticker);
        options.signal.removeEventListener("abort", onAbort);
        settle();
      };
      const check = () => {
        if (condition()) done(() => resolve(performance.now()));
      };
      const onAbort = () => done(() => reject(new Error(`gave up waiting for ${what}: the budget is spent`)));
      const timer = setTimeout(
        () => done(() => reject(new Error(`timed out after ${options.timeoutMs / 1000}s waiting for ${what}`))),
        options.timeoutMs,
      );
      const ticker = setInterval(() => options.progress?.(), options.progressMs ?? 15_000);
      this.waiters.add(check);
      options.signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** Runs `task` for every item, at most `limit` at once; `onProgress` after each one. Rejects on the first failure. */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal.aborted) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (signal.aborted) throw new Error("gave up: the budget is spent");
}
