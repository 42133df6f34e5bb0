/**
 * How far a workload's rollout has come, read from its status the way `kubectl rollout status` reads it. The
 * instance's image moves to the new one only when this says complete.
 */
import { containerName } from "../desired/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { count, type ObservedWorkload } from "./observed.ts";

export interface RolloutProgress {
  /** Replicas the instance asks for. */
  readonly desired: number;
  /** Pods that exist, old and new. */
  readonly replicas: number;
  /** Pods running the current pod template. */
  readonly updated: number;
  readonly ready: number;
  readonly available: number;
  /** The workload controller has seen the workload's latest generation. */
  readonly observed: boolean;
  /** The image of the workload's pod template (what it rolls out), if any. */
  readonly image: string | undefined;
  /** Every desired replica runs the current template and is ready and available, and no old pod is left. */
  readonly complete: boolean;
  /** The Deployment gave up (Progressing=False, ProgressDeadlineExceeded): its message. */
  readonly deadlineExceeded: string | undefined;
  /**
   * The Deployment cannot create pods (ReplicaFailure=True, copied from its ReplicaSet): the apiserver's reason
   * (`FailedCreate`) and message, e.g. a Pod Security or quota rejection.
   */
  readonly replicaFailure: { readonly reason: string; readonly message: string } | undefined;
}

/** The progress of `workload` towards `desired` replicas. */
export function rolloutProgress(workload: ObservedWorkload, desired: number): RolloutProgress {
  const status = workload.status ?? {};
  const generation = workload.metadata.generation ?? 0;
  const observed = count(status.observedGeneration) >= generation;
  const replicas = count(status.replicas);
  const updated = count(status.updatedReplicas);
  const ready = count(status.readyReplicas);
  const available = count(status.availableReplicas);
  const containers = workload.spec?.template?.spec?.containers ?? [];
  const image = (containers.find((c) => c.name === containerName) ?? containers[0])?.image;
  // A StatefulSet has finished only when its current revision caught up with the update revision.
  const revisionsSettled =
    workload.kind !== "StatefulSet" || desired === 0 || status.currentRevision === status.updateRevision;
  const complete =
    observed &&
    count(workload.spec?.replicas) === desired &&
    updated === desired &&
    replicas === desired &&
    ready === desired &&
    available === desired &&
    revisionsSettled;
  const stuck = (status.conditions ?? []).find(
    (c) => c.type === "Progressing" && c.status === "False" && c.reason === "ProgressDeadlineExceeded",
  );
  const failure = (status.conditions ?? []).find((c) => c.type === "ReplicaFailure" && c.status === "True");
  return {
    desired,
    replicas,
    updated,
    ready,
    available,
    observed,
    image,
    complete,
    deadlineExceeded: stuck ? (stuck.message ?? "the Deployment exceeded its progress deadline") : undefined,
    // Only while pods are still missing: the condition lags a scale-down that made the failure moot. A failure
    // of the control plane itself is no reason: the ReplicaSet controller retries it.
    replicaFailure:
      failure && observed && (replicas < desired || updated < desired) && !controlPlaneAway(failure.message ?? "")
        ? { reason: failure.reason ?? "FailedCreate", message: failure.message ?? "the Deployment cannot create pods" }
        : undefined,
  };
}

/** A core/v1 Event, as far as {@link creationFailure} reads it. */
export interface ObservedEvent extends KubeObject {
  readonly reason?: string;
  readonly message?: string;
  readonly lastTimestamp?: string;
  readonly eventTime?: string;
  readonly series?: { readonly lastObservedTime?: string };
}

/**
 * Why a StatefulSet cannot create its pods, from the events its controller records about it: a StatefulSet has
 * no ReplicaFailure condition, only `FailedCreate` / `SuccessfulCreate` events. The newest of these decides, so a
 * failure that has since been overcome (a quota raised, a policy relaxed) no longer counts. Undefined when the
 * newest is a success or there is none, or when it failed only because the control plane was away (the
 * StatefulSet controller retries those by itself).
 */
export function creationFailure(events: readonly ObservedEvent[]): { reason: string; message: string } | undefined {
  const creates = events
    .filter((event) => event.reason === "FailedCreate" || event.reason === "SuccessfulCreate")
    .map((event) => ({ event, at: Date.parse(lastSeen(event)) || 0 }))
    .sort((a, b) => a.at - b.at);
  const newest = creates.at(-1)?.event;
  if (newest?.reason !== "FailedCreate" || controlPlaneAway(newest.message ?? "")) return undefined;
  return { reason: "FailedCreate", message: newest.message ?? "the StatefulSet cannot create its pods" };
}

/**
 * Messages of a pod create that failed because the control plane was briefly away, not because anything refused
 * the pod: etcd down or slow (`etcdserver: request timed out`, a 504 `Timeout: request did not complete`), the
 * apiserver unreachable or overloaded, a webhook that could not be called (`Internal error occurred`). The
 * workload controller retries these by itself, so they are transient: they must never make an instance
 * Degraded (a refusal, such as Pod Security or a quota, says "forbidden" and stays a problem).
 */
const controlPlaneAwayPattern = new RegExp(
  [
    "etcdserver",
    "Internal error occurred",
    "Timeout: request did not complete",
    "context deadline exceeded",
    "connection refused",
    "the server is currently unable to handle the request",
    "the server has received too many requests",
    "http2: client connection lost",
    "i/o timeout",
    "TLS handshake timeout",
    "rpc error: code = Unavailable",
  ]
    .map((text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"))
    .join("|"),
  "i",
);

/** True for a create failure of the control plane itself (see {@link controlPlaneAwayPattern}): transient. */
function controlPlaneAway(message: string): boolean {
  return controlPlaneAwayPattern.test(message);
}

/** True when the StatefulSet's controller has seen it and still has fewer pods than it should. */
export function missingPods(workload: ObservedWorkload, desired: number): boolean {
  const progress = rolloutProgress(workload, desired);
  return workload.kind === "StatefulSet" && progress.observed && progress.replicas < desired;
}

function lastSeen(event: ObservedEvent): string {
  return (
    event.series?.lastObservedTime ?? event.lastTimestamp ?? event.eventTime ?? event.metadata.creationTimestamp ?? ""
  );
}
