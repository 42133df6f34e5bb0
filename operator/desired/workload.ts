/** Which workload kind an instance runs as. */
import { desiredDeployment } from "./deployment.ts";
import type { DesiredInput, DesiredWorkload } from "./objects.ts";
import { desiredStatefulSet } from "./statefulset.ts";

/** The workload kinds an instance can run as. */
export type WorkloadKind = DesiredWorkload["kind"];

/** StatefulSet when the spec asks for storage (each replica keeps its own claim), otherwise Deployment. */
export function workloadKind(instance: DesiredInput): WorkloadKind {
  return instance.spec.storage === undefined ? "Deployment" : "StatefulSet";
}

/** The desired workload of either kind. */
export function desiredWorkload(instance: DesiredInput): DesiredWorkload {
  return workloadKind(instance) === "StatefulSet" ? desiredStatefulSet(instance) : desiredDeployment(instance);
}
