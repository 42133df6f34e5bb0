/**
 * A list+watch loop that keeps an ObjectStore current and tells handlers what changed. We own the loop instead of
 * using client-node's informer, which ends every watch after ~30 s, reconnects with a backoff that grows to 30 s
 * (an idle informer can miss a change for that long), never asks for bookmarks, and has been seen to stop silently.
 *
 * Here, as client-go's reflector: the list is paginated (`limit`/`continue`) and, the first time, served from the
 * apiserver's watch cache (resourceVersion "0"); after a 410 it is a consistent read. A watch resumes from the last
 * resourceVersion seen (events and bookmarks), asks for bookmarks, and on any error but 410 Gone (429, 5xx, a broken
 * connection) resumes from there after a backoff, never relisting; it is restarted at once when the server ends it (its
 * timeoutSeconds is jittered between 5 and 10 minutes, as client-go does, so many informers do not reconnect together);
 * the backoff is capped at 5–30 s by the number of informers (reconnectBackoffCapMs), so the cache is current again
 * soon after an outage ends. A watch that hears nothing, not even a bookmark, for `idleTimeoutMs` is assumed dead and
 * replaced. Readiness asks whether the informer is connected (disconnectedFor), not whether it heard something
 * recently: a quiet resource on an apiserver that sends no bookmarks has no events for hours, and is still current.
 * Objects are transformed before they are stored (by default: managedFields and the last-applied
 * annotation dropped, which nothing reads and which are often half of an object's size).
 */
import type { Logger } from "pino";
import { GoneError, NotFoundError, type KubeClient, type KubeObject } from "../../kube/index.ts";
import { realClock, sleep, type Clock } from "../../kube/clock.ts";
import { ObjectStore, type StoreChange } from "./store.ts";

/** The part of KubeClient an informer needs. */
export type ListWatchClient = Pick<KubeClient, "listEach" | "watch">;

/** Callbacks for store changes. They run synchronously in event order; keep them cheap (enqueue a key). */
export interface InformerHandlers<T> {
  /** `initialList`: the object came with the informer's first list (it is not news, the cache is filling). */
  readonly onAdd?: (object: T, initialList: boolean) => void;
  readonly onUpdate?: (oldObject: T, newObject: T) => void;
  readonly onDelete?: (object: T) => void;
}

export interface InformerOptions {
  readonly client: ListWatchClient;
  readonly apiVersion: string;
  readonly kind: string;
  /** Watch one namespace; all namespaces when omitted. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly logger: Logger;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default Math.random */
  readonly random?: () => number;
  /** Server-side watch timeout, jittered to [min, 2·min). @default 300 */
  readonly minWatchTimeoutSeconds?: number;
  /**
   * Replace a watch that delivered nothing, not even a bookmark, for this long. The apiserver sends a bookmark
   * roughly every minute to watchers that ask, so silence beyond that means a dead connection.
   * @default 150_000
   */
  readonly idleTimeoutMs?: number;
  /** First retry delay after a failed list or watch, doubling per failure. @default 200 */
  readonly initialBackoffMs?: number;
  /**
   * The longest retry delay (before ×1-1.5 jitter) while disconnected: how long after an apiserver comes back the
   * cache may still be stale. A few seconds, not client-go's 30 s; the manager raises it with the number of
   * informers ({@link reconnectBackoffCapMs}) so many of them do not hammer an apiserver that is down.
   * @default 5_000
   */
  readonly maxBackoffMs?: number;
  /** Objects per list page. @default 500, as client-go */
  readonly pageSize?: number;
  /** Applied to every object before it is stored and handed to handlers. @default stripUnread */
  readonly transform?: (object: KubeObject) => KubeObject;
  /** Label keys the store indexes per namespace, for cheap lists by them (see ObjectStore). */
  readonly indexedLabels?: readonly string[];
  /** How many objects no owner accounts for one namespace may have in the store (see {@link NamespaceLimit}). */
  readonly namespaceLimit?: NamespaceLimit;
}

/**
 * A bound on what one namespace's objects may cost the store, for a kind anyone in the namespace may create with
 * the watched label: of the objects `counts` counts (those no owner accounts for, kept in part), at most
 * `maxObjects` per namespace. Past it the informer stops caching the namespace ({@link Informer.covers} is false
 * there: readers go to the apiserver) but still tells its handlers of each event there; it counts the namespace
 * again by a relist at a renewal of its watch (every 5–10 minutes): the first one, then 10 minutes after the last
 * list, doubling up to an hour while a namespace stays past it. It caches a namespace again once a list finds it
 * within the bound.
 */
export interface NamespaceLimit {
  readonly maxObjects: number;
  readonly counts: (object: KubeObject) => boolean;
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * How long after a list that found a namespace past its limit the next renewal of the watch relists to count it
 * again: 10 minutes, doubling while it stays past it, at most an hour (a tenant's flood of 200,000 objects costs
 * each relist ~1 s of the operator's CPU).
 */
const firstRecountDelayMs = 10 * 60_000;
const maxRecountDelayMs = 60 * 60_000;

/**
 * The retry cap for `informers` informers of one process: 250 ms each, at least 5 s, at most 30 s. Disconnected
 * together (an apiserver outage), they then send at most about 4 failing lists or watches a second between them,
 * and the cache is current again within seconds of the apiserver's return when they are few.
 */
export function reconnectBackoffCapMs(informers: number): number {
  return Math.min(30_000, Math.max(5_000, Math.ceil(informers) * 250));
}

/** Drops what no reconcile reads and what makes cached objects big: managedFields, kubectl's last-applied copy. */
export function stripUnread(object: KubeObject): KubeObject {
  const { managedFields, ...metadata } = object.metadata;
  if (metadata.annotations && lastApplied in metadata.annotations) {
    const { [lastApplied]: dropped, ...annotations } = metadata.annotations;
    metadata.annotations = annotations;
  }
  return { ...object, metadata };
}

/** Why a watch request ended without an error. */
type WatchEnd = "closed" | "idle" | "stopped";

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: ObjectStore<T>;
  readonly apiVersion: string;
  readonly kind: string;
  /** The watched namespace; undefined for all. */
  readonly namespace: string | undefined;
  private readonly options: InformerOptions;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly logger: Logger;
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private lastHeard: number | undefined;
  /** A watch the apiserver accepted is open. */
  private watching = false;
  /** When the informer last was known connected: a list, or the end of a watch the apiserver had accepted. */
  private lastConnected: number | undefined;
  private resourceVersion: string | undefined;
  /** After a 410 the next list must be a consistent read: the watch cache may be as old as what expired. */
  private consistentRelist = false;
  /** What the store keeps of an object (the `transform` option): also what a cache keeps of an own write. */
  readonly transform: (object: KubeObject) => KubeObject;
  /** Namespaces past the namespace limit: not cached until a relist finds them within it. */
  private uncached = new Set<string>();
  /** When the last list was stored, and how long after it a namespace past its limit is counted again. */
  private listedAtMs = 0;
  private recountDelayMs = 0;

  constructor(options: InformerOptions) {
    this.options = options;
    this.store = new ObjectStore<T>({
      ...(options.indexedLabels ? { indexedLabels: options.indexedLabels } : {}),
      ...(options.namespaceLimit ? { counted: options.namespaceLimit.counts } : {}),
    });
    this.apiVersion = options.apiVersion;
    this.kind = options.kind;
    this.namespace = options.namespace;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.transform = options.transform ?? stripUnread;
    this.logger = options.logger.child({
      informer: options.kind,
      ...(options.namespace ? { namespace: options.namespace } : {}),
    });
  }

  /** Registers handlers; register before `start` to see the initial list as adds. */
  addHandlers(handlers: InformerHandlers<T>): void {
    this.handlers.push(handlers);
  }

  /** Starts the list+watch loop in the background. */
  start(): void {
    if (this.loop) return;
    this.loop = this.run();
  }

  /** Stops watching and resolves when the loop has ended. The store stays readable. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  /** True once the first list has been stored and handed to the handlers. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in; resolves early (check hasSynced) when `signal` aborts or the informer stops. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced || this.stopping.signal.aborted || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        this.stopping.signal.removeEventListener("abort", done);
        resolve();
      };
      this.syncWaiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
      this.stopping.signal.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * Milliseconds since the apiserver last proved this informer current (a list, an event, a bookmark, or a clean
   * end of a watch); Infinity before the first list. /readyz compares it with a threshold.
   */
  staleness(): number {
    return this.lastHeard === undefined ? Infinity : this.clock.monotonicMs() - this.lastHeard;
  }

  /**
   * Milliseconds the informer has been without a working watch: 0 while the apiserver holds one open for it (events
   * or not), else the time since it last had one or listed (the watch is being re-established, after a backoff
   * when it failed); Infinity before the first list. /readyz compares it with a threshold.
   */
  disconnectedFor(): number {
    if (this.watching) return 0;
    return this.lastConnected === undefined ? Infinity : this.clock.monotonicMs() - this.lastConnected;
  }

  /** False for a namespace ("" for cluster-scoped objects) this informer does not cache: past its namespace limit. */
  covers(namespace: string | undefined): boolean {
    return !this.uncached.has(namespace ?? "");
  }

  /** The namespaces past the namespace limit, not cached. */
  uncachedNamespaces(): readonly string[] {
    return [...this.uncached];
  }

  /** The resourceVersion the next watch resumes from (undefined means: relist first). */
  get lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  private async run(): Promise<void> {
    const initialBackoff = this.options.initialBackoffMs ?? 200;
    const maxBackoff = this.options.maxBackoffMs ?? 5_000;
    let backoff = initialBackoff;
    // Said once until the kind is served: an operator started before its CRD is installed would log a stack
    // trace every few seconds.
    let notServedSaid = false;
    const stopped = this.stopping.signal;
    while (!stopped.aborted) {
      try {
        if (this.resourceVersion === undefined) await this.relist();
        notServedSaid = false;
        const startedAt = this.clock.monotonicMs();
        const { end, events } = await this.watchOnce();
        if (end === "stopped") break;
        backoff = initialBackoff;
        // A namespace past the limit is counted again by a relist at a renewal of the watch, less often while it
        // stays past it: each relist reads every namespace's objects of the kind.
        if (this.uncached.size > 0 && this.clock.monotonicMs() - this.listedAtMs >= this.recountDelayMs) {
          this.resourceVersion = undefined;
        }
        if (end === "closed") {
          this.heard();
          // A server that ends watches at once (misconfiguration, proxy) would otherwise make us spin.
          if (events === 0 && this.clock.monotonicMs() - startedAt < 1000) await sleep(this.clock, 1000, stopped);
        }
      } catch (error) {
        if (stopped.aborted) break;
        if (error instanceof GoneError) {
          // Our resourceVersion is older than the apiserver keeps history for: start over from a fresh list.
          this.logger.info({ resourceVersion: this.resourceVersion }, "watch expired (410 Gone), relisting");
          this.resourceVersion = undefined;
          this.consistentRelist = true;
          continue;
        }
        // Anything else (a broken connection, 429, 5xx, 403): resume the watch where it was, after a backoff.
        const delayMs = Math.round(backoff * (1 + this.random() * 0.5));
        if (error instanceof NotFoundError && this.resourceVersion === undefined) {
          const { apiVersion, kind } = this.options;
          if (!notServedSaid) {
            this.logger.warn(
              { apiVersion, kind },
              `the apiserver does not serve ${apiVersion} ${kind} (is its CustomResourceDefinition installed?): ` +
                "waiting for it",
            );
          }
          notServedSaid = true;
        } else {
          this.logger.warn(
            { err: error, retryInMs: delayMs, relist: this.resourceVersion === undefined },
            "list/watch failed",
          );
        }
        await sleep(this.clock, delayMs, stopped);
        backoff = Math.min(backoff * 2, maxBackoff);
      }
    }
    this.logger.debug("informer stopped");
  }

  private async relist(): Promise<void> {
    const pageSize = this.options.pageSize ?? 500;
    const scope = {
      ...(this.options.namespace ? { namespace: this.options.namespace } : {}),
      ...(this.options.labelSelector ? { labelSelector: this.options.labelSelector } : {}),
    };
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let token: string | undefined;
    let pages = 0;
    // Namespaces past the limit, counted as the items arrive: their items are not kept even for the list's time.
    const limit = this.options.namespaceLimit;
    const counted = new Map<string, number>();
    const over = new Set<string>();
    const keep = (object: T): T | undefined => {
      if (!limit) return object;
      const namespace = object.metadata.namespace ?? "";
      if (over.has(namespace)) return undefined;
      if (!limit.counts(object)) return object;
      const count = (counted.get(namespace) ?? 0) + 1;
      counted.set(namespace, count);
      if (count <= limit.maxObjects) return object;
      over.add(namespace);
      return undefined;
    };
    do {
      // A continued page carries the snapshot in its token; the first page names the resourceVersion to read at.
      // Read item by item, each transformed as it arrives: the first page comes whole from the watch cache
      // (`limit` does not apply there), and only what the transform keeps of each item stays in memory.
      const page = await this.options.client.listEach(
        this.options.apiVersion,
        this.options.kind,
        {
          ...scope,
          limit: pageSize,
          ...(token ? { continue: token } : this.consistentRelist ? {} : { resourceVersion: "0" }),
        },
        (item) => keep(this.transform(item) as T),
      );
      pages++;
      resourceVersion = page.metadata.resourceVersion;
      token = page.metadata.continue || undefined;
      // One by one: a page from the watch cache may hold hundreds of thousands of items, past how many arguments
      // a call may take (`push(...items)` threw RangeError at 200,000 and the informer never synced).
      for (const item of page.items) if (item !== undefined) items.push(item);
    } while (token);
    if (!resourceVersion) throw new Error(`list of ${this.options.kind} returned no resourceVersion`);
    const kept = over.size === 0 ? items : items.filter((object) => !over.has(object.metadata.namespace ?? ""));
    const changes = this.store.replace(kept, over);
    const recovered = new Set([...this.uncached].filter((namespace) => !over.has(namespace)));
    for (const namespace of over) if (!this.uncached.has(namespace)) this.sayUncached(namespace);
    for (const namespace of recovered) {
      this.logger.info(
        { namespace, objects: this.store.countedIn(namespace) },
        "namespace within its limit: cached again",
      );
    }
    this.uncached = over;
    this.listedAtMs = this.clock.monotonicMs();
    this.recountDelayMs =
      over.size === 0 ? 0 : Math.min(maxRecountDelayMs, Math.max(firstRecountDelayMs, this.recountDelayMs * 2));
    this.resourceVersion = resourceVersion;
    this.consistentRelist = false;
    this.heard();
    this.lastConnected = this.clock.monotonicMs();
    this.logger.debug({ resourceVersion, items: items.length, pages, changes: changes.length }, "listed");
    // What a namespace cached again brings is the cache filling too, not news.
    const filling = (change: StoreChange<T>) =>
      !this.synced || (change.type === "add" && recovered.has(change.object.metadata.namespace ?? ""));
    for (const change of changes) this.deliver(change, filling(change));
    if (!this.synced) {
      this.synced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
  }

  /** One watch request, from the current resourceVersion until the server ends it, it goes idle, or we stop. */
  private async watchOnce(): Promise<{ end: WatchEnd; events: number }> {
    // Stopped while the list was read (its handlers may stop it): the abort below would never come.
    if (this.stopping.signal.aborted) return { end: "stopped", events: 0 };
    const minTimeout = this.options.minWatchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.floor(minTimeout * (1 + this.random()));
    const idleTimeoutMs = this.options.idleTimeoutMs ?? 150_000;
    const request = new AbortController();
    const onStop = () => request.abort();
    this.stopping.signal.addEventListener("abort", onStop, { once: true });
    let idle = false;
    const armWatchdog = () =>
      this.clock.setTimeout(() => {
        idle = true;
        request.abort();
      }, idleTimeoutMs);
    let watchdog = armWatchdog();
    let events = 0;
    try {
      const stream = this.options.client.watch<T>(this.options.apiVersion, this.options.kind, {
        ...(this.options.namespace ? { namespace: this.options.namespace } : {}),
        ...(this.options.labelSelector ? { labelSelector: this.options.labelSelector } : {}),
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal: request.signal,
        onOpen: () => (this.watching = true),
      });
      for await (const event of stream) {
        events++;
        this.watching = true;
        this.clock.clearTimeout(watchdog);
        watchdog = armWatchdog();
        this.heard();
        const resourceVersion = event.object.metadata?.resourceVersion;
        if (event.type === "BOOKMARK") {
          if (resourceVersion) this.resourceVersion = resourceVersion;
          continue;
        }
        const object = this.transform(event.object) as T;
        const namespace = object.metadata.namespace ?? "";
        if (this.uncached.has(namespace)) {
          // Not stored, still news: the handlers wake whoever the object concerns.
          if (event.type === "ADDED") this.deliver({ type: "add", object });
          else if (event.type === "MODIFIED") this.deliver({ type: "update", oldObject: object, object });
          else this.deliver({ type: "delete", object });
        } else if (event.type === "DELETED") {
          const change = this.store.remove(object);
          if (change) this.deliver(change);
        } else {
          const change = this.store.upsert(object);
          this.limitNamespace(namespace);
          this.deliver(change);
        }
        if (resourceVersion) this.resourceVersion = resourceVersion;
      }
    } catch (error) {
      // Aborting before the response arrived surfaces as a transport error; it is our own doing, not a failure.
      if (!request.signal.aborted) throw error;
    } finally {
      this.clock.clearTimeout(watchdog);
      this.stopping.signal.removeEventListener("abort", onStop);
      // Connected until now if the apiserver had accepted this watch, even a silent one; a request that never got
      // an answer (or was refused) proves nothing, and the time without a watch keeps counting.
      if (this.watching) this.lastConnected = this.clock.monotonicMs();
      this.watching = false;
    }
    if (this.stopping.signal.aborted) return { end: "stopped", events };
    if (idle) {
      this.logger.warn({ idleTimeoutMs, resourceVersion: this.resourceVersion }, "watch silent too long, restarting");
      return { end: "idle", events };
    }
    this.logger.debug(
      { events, timeoutSeconds, resourceVersion: this.resourceVersion },
      "watch closed by server, resuming",
    );
    return { end: "closed", events };
  }

  /** Stops caching `namespace` once it is past the namespace limit. */
  private limitNamespace(namespace: string): void {
    const limit = this.options.namespaceLimit;
    if (!limit || this.store.countedIn(namespace) <= limit.maxObjects) return;
    this.store.forgetNamespace(namespace);
    this.uncached.add(namespace);
    this.sayUncached(namespace);
  }

  private sayUncached(namespace: string): void {
    // A namespaced informer's logger names its namespace already.
    this.logger.warn(
      { ...(this.namespace === undefined ? { namespace } : {}), maxObjects: this.options.namespaceLimit?.maxObjects },
      "namespace past its limit of objects kept in part (labelled as the operator's, no owner keeps them): not " +
        "cached, read live, counted again at each renewal of the watch",
    );
  }

  private heard(): void {
    this.lastHeard = this.clock.monotonicMs();
  }

  private deliver(change: StoreChange<T>, initialList = false): void {
    for (const handlers of this.handlers) {
      try {
        if (change.type === "add") handlers.onAdd?.(change.object, initialList);
        else if (change.type === "update") handlers.onUpdate?.(change.oldObject, change.object);
        else handlers.onDelete?.(change.object);
      } catch (error) {
        // A failing handler must not stop the informer or starve the other handlers.
        this.logger.error({ err: error, change: change.type }, "informer handler failed");
      }
    }
  }
}
