/** One reconcile of one MyAppInstance, behind a narrow client (ClusterClient) to Kubernetes. */
export { reconcileChart } from "./chart.ts";
export type { ChartOutcome } from "./chart.ts";
export { PermanentError, TransientError } from "./errors.ts";
export type { ObservedClaim, ObservedStorageClass, ObservedWorkload } from "./observed.ts";
export type { InstanceObject } from "./session.ts";
export { fieldManager, clusterClient, reportingController } from "./cluster-client.ts";
export type {
  ApplyConfiguration,
  ClusterClient,
  DeleteOptions,
  JsonPatchOperation,
  EventRecord,
  ClusterClientOptions,
  ReadCache,
  ObjectKey,
  ObjectReference,
} from "./cluster-client.ts";
export { reconcile, reconciler, recordStalled, statusProgressIntervalMs } from "./reconcile.ts";
export type { ReconcileDeps, ReconcileOutcome } from "./reconcile.ts";
export { creationFailure, missingPods, rolloutProgress } from "./rollout.ts";
export type { ObservedEvent, RolloutProgress } from "./rollout.ts";
export { answeringRequest, computeStatus, problemStatus, stalledStatus, statusChanged } from "./status.ts";
export type { Problem, StatusInput, Step } from "./status.ts";
export { Sightings } from "./sightings.ts";
export { progressOnly, StatusPacer } from "./status-pacing.ts";
export {
  defaultClassAnnotations,
  planStatefulSet,
  storageClassProblem,
  unboundClaimsByClass,
  volumeGrowth,
} from "./storage-plan.ts";
export type { StatefulSetPlan, VolumeGrowth, WaitingClaims } from "./storage-plan.ts";
