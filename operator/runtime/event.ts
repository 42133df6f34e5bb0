/**
 * The runtime's event contract: what a reconciler hands to the event recorder. It lives apart from the recorder
 * so a reconciler can name these types (as a Go reconciler names record.EventRecorder) without importing the runtime.
 */
import type { KubeObject } from "../../kube/index.ts";

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
  /** What the controller did or failed to do, CamelCase: `Apply`, `Delete`, `Reconcile`. */
  readonly action: string;
  /** Human-readable, at most 1 kB. */
  readonly note: string;
  readonly regarding: ObjectReference;
  /** A second object involved, e.g. the child that was created. */
  readonly related?: ObjectReference;
}

/** A reference to an object, for an event's `related`. */
export function referenceTo(object: KubeObject): ObjectReference {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name ?? "",
    namespace: object.metadata.namespace ?? "",
    ...(object.metadata.uid ? { uid: object.metadata.uid } : {}),
  };
}
