/**
 * What one reconcile of one instance carries around: the port (counting the writes it makes), the instance as
 * read at the start, a logger bound to the key, the clock and the time of day it started, and an event helper about
 * the instance.
 */
import type { StatusPacer } from "./status-pacing.ts";
import type { Logger } from "pino";
import { apiVersion, kind } from "../../api/index.ts";
import type { Clock, KubeObject } from "../../kube/index.ts";
import type {
  ApplyConfiguration,
  ClusterPort,
  EventRecord,
  JsonPatchOperation,
  ObjectKey,
  ObjectReference,
} from "./port.ts";

/** A MyAppInstance as read, before anything about its spec or status is trusted. */
export interface InstanceObject extends KubeObject {
  readonly spec?: unknown;
  readonly status?: unknown;
}

export interface Session {
  /** The port; every write through it is counted in `writes`. */
  readonly port: ClusterPort;
  readonly key: ObjectKey;
  readonly instance: InstanceObject;
  readonly logger: Logger;
  /** For durations (status pacing): read its monotonicMs(). */
  readonly clock: Clock;
  /**
   * The wall-clock time this reconcile started, stamped on the conditions it changes: one reading, so every
   * condition one reconcile moves carries the same time.
   */
  readonly wallTime: Date;
  /** API writes so far (applies, patches, deletes, events). */
  readonly writes: () => number;
  /** What this process last wrote to each instance's status, and when (status-pacing.ts); none: no pacing. */
  readonly statusPacer?: StatusPacer | undefined;
  /** Records an event about the instance. */
  event(
    type: EventRecord["type"],
    reason: string,
    action: string,
    note: string,
    related?: ObjectReference,
  ): Promise<void>;
}

/** Starts a session for `instance`. */
export function openSession(
  port: ClusterPort,
  key: ObjectKey,
  instance: InstanceObject,
  logger: Logger,
  clock: Clock,
  statusPacer?: StatusPacer,
): Session {
  const counting = countingPort(port);
  const regarding: ObjectReference = {
    apiVersion,
    kind,
    name: key.name,
    namespace: key.namespace,
    ...(instance.metadata.uid ? { uid: instance.metadata.uid } : {}),
  };
  return {
    port: counting.port,
    key,
    instance,
    logger,
    clock,
    wallTime: new Date(clock.wallTime()),
    writes: counting.writes,
    statusPacer,
    event: (type, reason, action, note, related) =>
      counting.port.emitEvent({ type, reason, action, note, regarding, ...(related ? { related } : {}) }),
  };
}

/** A reference to a child, for an event's `related`. */
export function referenceTo(object: KubeObject): ObjectReference {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name ?? "",
    namespace: object.metadata.namespace ?? "",
    ...(object.metadata.uid ? { uid: object.metadata.uid } : {}),
  };
}

/**
 * Wraps `port` so each write is counted (reads are free; the converged path must make none of the others). This
 * is the count of every reconcile that returns (its `writes`, which the runtime logs as is); the runtime's own
 * WriteCounter, which attributes the KubeClient's writes by async context, is only the fallback for a reconcile
 * that throws. The two differ on events, which the runtime's recorder writes fire-and-forget, merged into series
 * and rate-limited: here an event asked for is a write, whether or not the recorder sends it before the
 * reconcile ends.
 */
export function countingPort(port: ClusterPort): { port: ClusterPort; writes: () => number } {
  let writes = 0;
  const counted =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      writes += 1;
      return call(...args);
    };
  return {
    writes: () => writes,
    port: {
      find: <T extends KubeObject>(
        apiVersion: string,
        kind: string,
        name: string,
        namespace?: string,
        options?: { readonly live?: boolean },
      ) => port.find<T>(apiVersion, kind, name, namespace, options),
      list: <T extends KubeObject>(
        apiVersion: string,
        kind: string,
        namespace: string,
        labelSelector: string,
        fieldSelector?: string,
      ) => port.list<T>(apiVersion, kind, namespace, labelSelector, fieldSelector),
      apply: <T extends KubeObject>(object: ApplyConfiguration) => {
        writes += 1;
        return port.apply<T>(object);
      },
      create: <T extends KubeObject>(object: ApplyConfiguration) => {
        writes += 1;
        return port.create<T>(object);
      },
      jsonPatch: <T extends KubeObject>(
        apiVersion: string,
        kind: string,
        name: string,
        namespace: string,
        operations: readonly JsonPatchOperation[],
      ) => {
        writes += 1;
        return port.jsonPatch<T>(apiVersion, kind, name, namespace, operations);
      },
      applyStatus: counted((instance, status) => port.applyStatus(instance, status)),
      setFinalizers: counted((instance, finalizers) => port.setFinalizers(instance, finalizers)),
      delete: counted((...args) => port.delete(...args)),
      emitEvent: counted((event) => port.emitEvent(event)),
    },
  };
}
