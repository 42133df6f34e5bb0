/**
 * How far a workload's rollout has come, read from its status the way `kubectl rollout status` reads it. The
 * instance's image moves to the new one only when this says complete.
 */
import { containerName } from "../desired/index.ts";
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
  };
}
