/**
 * The narrow port between the reconciler and Kubernetes: the handful of calls one reconcile makes, nothing more.
 * The reconcile logic is tested against a recording fake of this port (asserting the exact writes); `kubePort`
 * implements it over kube/client.ts for the real thing.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { apiVersion as instanceApiVersion, kind as instanceKind, type MyAppInstanceStatus } from "../../api/index.ts";
import type { KubeClient, KubeObject } from "../../kube/index.ts";

/** The field manager of every server-side apply the operator makes (`kubectl get -o yaml --show-managed-fields`). */
export const fieldManager = "myapp-operator";

/** `reportingController` of the operator's events. */
export const reportingController = "example.com/myapp-operator";

/** Namespace and name of a namespaced object. */
export interface ObjectKey {
  readonly namespace: string;
  readonly name: string;
}

/** An object an event is about (events.k8s.io ObjectReference). */
export interface ObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid?: string;
}

/** One event for `kubectl describe`: what happened (reason, note), to what, and whether it needs attention. */
export interface EventRecord {
  readonly type: "Normal" | "Warning";
  /** CamelCase, e.g. `Created`, `RolloutComplete`, `InvalidSpec`. */
  readonly reason: string;
  /** What the operator did or failed to do, CamelCase: `Apply`, `Delete`, `Reconcile`. */
  readonly action: string;
  /** Human-readable, at most 1 kB. */
  readonly note: string;
  readonly regarding: ObjectReference;
  /** A second object involved, e.g. the child that was created. */
  readonly related?: ObjectReference;
}

/** What server-side apply needs to address an object; the rest of the configuration is the fields we own. */
export interface ApplyConfiguration {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

export interface DeleteOptions {
  readonly propagationPolicy: "Background" | "Foreground" | "Orphan";
  /** Delete only the object with this uid, never a namesake created since it was read. */
  readonly preconditionUid?: string;
}

export interface ClusterPort {
  /** The object, or undefined when it does not exist. */
  find<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<T | undefined>;
  /** Objects of a kind in a namespace that match a label selector (`k=v,k2=v2`) and, if given, a field selector. */
  list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    labelSelector: string,
    fieldSelector?: string,
  ): Promise<T[]>;
  /** Server-side apply with the operator's field manager, forcing ownership of the fields it sets. */
  apply<T extends KubeObject>(object: ApplyConfiguration): Promise<T>;
  /** Server-side apply of the instance's status subresource. */
  applyStatus(instance: ObjectKey, status: MyAppInstanceStatus): Promise<void>;
  /**
   * Replaces the instance's finalizers, only if it is still at `resourceVersion` (ConflictError otherwise), so
   * a finalizer someone else added in between is never dropped.
   */
  setFinalizers(
    instance: ObjectKey & { readonly resourceVersion: string },
    finalizers: readonly string[],
  ): Promise<void>;
  /** Deletes; resolves false when the object was already gone. */
  delete(apiVersion: string, kind: string, name: string, namespace: string, options: DeleteOptions): Promise<boolean>;
  /** Records an event. Best effort: a failure is logged, never thrown, because events must not break a reconcile. */
  emitEvent(event: EventRecord): Promise<void>;
}

export interface KubePortOptions {
  /** `reportingInstance` of events: the pod or host name of this operator process. */
  readonly reportingInstance: string;
  readonly logger: Logger;
  /** @default fieldManager */
  readonly fieldManager?: string;
  /** Event timestamps. @default () => new Date() */
  readonly now?: () => Date;
}

/** The port over a KubeClient: server-side apply as `fieldManager`, events in events.k8s.io/v1. */
export function kubePort(client: KubeClient, options: KubePortOptions): ClusterPort {
  const manager = options.fieldManager ?? fieldManager;
  const now = options.now ?? (() => new Date());
  return {
    find: <T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string) =>
      client.find<T>(apiVersion, kind, name, namespace),
    async list<T extends KubeObject>(
      apiVersion: string,
      kind: string,
      namespace: string,
      labelSelector: string,
      fieldSelector?: string,
    ) {
      return (
        await client.list<T>(apiVersion, kind, {
          namespace,
          labelSelector,
          ...(fieldSelector ? { fieldSelector } : {}),
        })
      ).items;
    },
    // The configuration is a partial object by design (only our fields); the client sends it as it is.
    apply: <T extends KubeObject>(object: ApplyConfiguration) =>
      client.apply<T>(object as unknown as KubeObject, { fieldManager: manager, force: true }),
    async applyStatus(instance, status) {
      const body = {
        apiVersion: instanceApiVersion,
        kind: instanceKind,
        metadata: { name: instance.name, namespace: instance.namespace },
        status,
      };
      await client.apply(body, { fieldManager: manager, force: true, subresource: "status" });
    },
    async setFinalizers(instance, finalizers) {
      // A merge patch carrying resourceVersion is an optimistic-concurrency write: 409 if the object moved on.
      const patch = { metadata: { resourceVersion: instance.resourceVersion, finalizers: [...finalizers] } };
      await client.mergePatch(instanceApiVersion, instanceKind, instance.name, instance.namespace, patch);
    },
    delete: (apiVersion, kind, name, namespace, deleteOptions) =>
      client.delete(apiVersion, kind, name, namespace, {
        propagationPolicy: deleteOptions.propagationPolicy,
        ...(deleteOptions.preconditionUid ? { preconditionUid: deleteOptions.preconditionUid } : {}),
      }),
    async emitEvent(event) {
      try {
        await client.create(eventObject(event, options.reportingInstance, now()), { fieldManager: manager });
      } catch (error) {
        options.logger.warn(
          { err: error, reason: event.reason, regarding: event.regarding.name },
          "could not record event",
        );
      }
    },
  };
}

/** An events.k8s.io/v1 Event for `record`, as client-go's new event recorder writes one. */
export function eventObject(record: EventRecord, reportingInstance: string, at: Date): KubeObject {
  return {
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: {
      // <object>.<random>, as client-go names events; the name part is capped so the whole stays a valid name.
      name: `${record.regarding.name.slice(0, 200)}.${randomBytes(8).toString("hex")}`,
      namespace: record.regarding.namespace,
    },
    eventTime: microTime(at),
    reportingController,
    reportingInstance: reportingInstance.slice(0, 128),
    action: record.action,
    reason: record.reason,
    note: truncate(record.note, 1024),
    type: record.type,
    regarding: record.regarding,
    ...(record.related ? { related: record.related } : {}),
  };
}

// metav1.MicroTime is RFC 3339 with exactly six fractional digits.
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function truncate(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  return `${bytes
    .subarray(0, maxBytes - 3)
    .toString("utf8")
    .replace(/\uFFFD$/, "")}...`;
}
