/**
 * What one reconcile of one instance carries around: the cluster client (counting the writes it asks for), the
 * instance as read at the start, a logger bound to the key, the clock and the time of day it started, and an event
 * helper about the instance.
 */
import type { StatusPacer } from "./status-pacing.ts";
import type { Sightings } from "./sightings.ts";
import type { Logger } from "pino";
import { apiVersion, kind } from "../../api/index.ts";
import type { Clock, KubeObject } from "../../kube/index.ts";
import type {
  ApplyConfiguration,
  ClusterClient,
  EventRecord,
  JsonPatchOperation,
  ObjectKey,
  ObjectReference,
} from "./cluster-client.ts";

export { referenceTo } from "../runtime/event.ts";

/** A MyAppInstance as read, before anything about its spec or status is trusted. */
export interface InstanceObject extends KubeObject {
  readonly spec?: unknown;
  readonly status?: unknown;
  /**
   * Set by the operator's cache, never by the API (operator/instance-as-read.ts): `spec.values` were `bytes` of
   * JSON, over the platform's `--render-values` (`limitKiB`), and are not kept; the reconcile reports it.
   */
  readonly valuesWithheld?: { readonly bytes: number; readonly limitKiB: number };
  /**
   * Set by the operator's cache, never by the API: `metadata.finalizers` had `count` entries, too long to keep, and
   * holds only the operator's own (if there); read the instance live before changing them.
   */
  readonly finalizersWithheld?: { readonly count: number };
}

/**
 * The API writes one reconcile asked for: the runtime's WriteTally (operator/runtime/controller.ts), which the
 * runtime hands each reconcile and logs once it returns or throws; the same shape, so this folder needs no import.
 */
export interface WriteTally {
  count: number;
  /** What the writes changed, one short phrase each, for the runtime's line about the reconcile. */
  readonly changes?: string[];
}

export interface Session {
  /** The cluster client; every write through it is counted in `writes`. */
  readonly cluster: ClusterClient;
  readonly key: ObjectKey;
  readonly instance: InstanceObject;
  readonly logger: Logger;
  /** For durations (status pacing): read its monotonicMs(). */
  readonly clock: Clock;
  /**
   * The wall-clock time this reconcile started, stamped on the conditions it changes: one reading, so every
   * condition one reconcile moves carries the same time.
   */
  readonly startedAt: Date;
  /** API writes asked for so far (applies, patches, deletes, events). */
  readonly writes: () => number;
  /** What this process last wrote to each instance's status, and when (status-pacing.ts); none: no pacing. */
  readonly statusPacer?: StatusPacer | undefined;
  /** Since when workloads have lagged a generation nobody asked for (generation-lag.ts); none: no grace. */
  readonly generationLags?: Sightings | undefined;
  /**
   * Tells what a write changed: `summary` ("Deployment/web created") joins the `changes` of the runtime's one line
   * about this reconcile (info); `details` go to a line of their own at debug.
   */
  changed(summary: string, details?: Readonly<Record<string, unknown>>): void;
  /** Records an event about the instance. */
  event(
    type: EventRecord["type"],
    reason: string,
    action: string,
    note: string,
    related?: ObjectReference,
  ): Promise<void>;
}

/** What the process remembers from one reconcile to the next, which a session reads and adds to. */
export interface ProcessMemory {
  readonly statusPacer?: StatusPacer | undefined;
  readonly generationLags?: Sightings | undefined;
}

/** Starts a session for `instance`; its writes are counted in `writes` (a fresh tally if none is given). */
export function openSession(
  cluster: ClusterClient,
  key: ObjectKey,
  instance: InstanceObject,
  logger: Logger,
  clock: Clock,
  memory: ProcessMemory = {},
  writes: WriteTally = { count: 0 },
): Session {
  const counted = countingClient(cluster, writes);
  const regarding: ObjectReference = {
    apiVersion,
    kind,
    name: key.name,
    namespace: key.namespace,
    ...(instance.metadata.uid ? { uid: instance.metadata.uid } : {}),
  };
  return {
    cluster: counted,
    key,
    instance,
    logger,
    clock,
    startedAt: new Date(clock.wallTimeMs()),
    writes: () => writes.count,
    statusPacer: memory.statusPacer,
    generationLags: memory.generationLags,
    changed: (summary, details) => {
      writes.changes?.push(summary);
      logger.debug(details ?? {}, summary);
    },
    event: (type, reason, action, note, related) =>
      counted.emitEvent({ type, reason, action, note, regarding, ...(related ? { related } : {}) }),
  };
}

/**
 * Wraps `cluster` so each write asked for adds one to `writes` (reads are free; the converged path must make none of
 * the others). The one count of a reconcile's writes: the runtime logs it on the reconcile's line whether the
 * reconcile returns or throws. A write is counted when asked for, so a refused one counts too, and so does an
 * event, which the runtime's recorder sends fire-and-forget, merged into series and rate-limited: whether or not
 * it is sent before the reconcile ends, it was asked for.
 */
export function countingClient(cluster: ClusterClient, writes: WriteTally): ClusterClient {
  const counted =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      writes.count += 1;
      return call(...args);
    };
  return {
    find: <T extends KubeObject>(
      apiVersion: string,
      kind: string,
      name: string,
      namespace?: string,
      options?: { readonly live?: boolean },
    ) => cluster.find<T>(apiVersion, kind, name, namespace, options),
    list: <T extends KubeObject>(
      apiVersion: string,
      kind: string,
      namespace: string,
      labelSelector: string,
      fieldSelector?: string,
    ) => cluster.list<T>(apiVersion, kind, namespace, labelSelector, fieldSelector),
    apply: <T extends KubeObject>(object: ApplyConfiguration) => {
      writes.count += 1;
      return cluster.apply<T>(object);
    },
    create: <T extends KubeObject>(object: ApplyConfiguration) => {
      writes.count += 1;
      return cluster.create<T>(object);
    },
    jsonPatch: <T extends KubeObject>(
      apiVersion: string,
      kind: string,
      name: string,
      namespace: string,
      operations: readonly JsonPatchOperation[],
    ) => {
      writes.count += 1;
      return cluster.jsonPatch<T>(apiVersion, kind, name, namespace, operations);
    },
    applyStatus: counted((instance, status) => cluster.applyStatus(instance, status)),
    setFinalizers: counted((instance, finalizers) => cluster.setFinalizers(instance, finalizers)),
    delete: counted((...args) => cluster.delete(...args)),
    emitEvent: counted((event) => cluster.emitEvent(event)),
  };
}
