/**
 * The platform's limits on an instance (its policy's registries, replicas and storage: the operator's
 * `--allowed-registries`, `--max-replicas` and `--max-storage`), applied to what a chart renders. A chart decides
 * its workloads' images, replica counts and volume sizes itself, where admission sees only `spec.image`,
 * `spec.replicas` and `spec.storage`: without this, a chart in a tenant's own ConfigMap could run any image at any
 * size. Each limit is checked where a render sets it: every container's image, a workload's `spec.replicas`, an
 * autoscaler's `spec.maxReplicas`, a StatefulSet's claim templates; and the replicas of all its workloads together
 * (render-usage.ts), which are the instance's. Pure.
 */
import { compareQuantities, parseQuantity, registryAllowing } from "../api/index.ts";
import { claimRequests } from "./claim-sizes.ts";
import { objectName, type RenderedObject } from "./manifests.ts";
import { list, podTemplateOf, record } from "./pod-templates.ts";
import type { RenderRefusal } from "./render-rules.ts";
import { renderUsage } from "./render-usage.ts";

/** The platform policy's per-instance limits (operator/admission/policy.ts); unset: no limit. */
export interface PlatformLimits {
  /** Image name prefixes (normalised as Docker reads them); empty: any registry. */
  readonly allowedRegistries: readonly string[];
  readonly maxReplicas?: number | undefined;
  /** A Kubernetes quantity, e.g. "100Gi". */
  readonly maxStorage?: string | undefined;
}

/** Kinds whose `spec.replicas` is a pod count. */
export const replicatedKinds = new Set([
  "apps/v1/Deployment",
  "apps/v1/StatefulSet",
  "apps/v1/ReplicaSet",
  "v1/ReplicationController",
]);
/** Kinds whose `spec.maxReplicas` is the most pods their target may be scaled to. */
export const autoscalerKinds = new Set([
  "autoscaling/v2/HorizontalPodAutoscaler",
  "autoscaling/v1/HorizontalPodAutoscaler",
]);
const containerLists = ["initContainers", "containers", "ephemeralContainers"] as const;

/** The first place a render goes over a limit, or undefined. */
export function platformLimitsRefusal(
  objects: readonly RenderedObject[],
  limits: PlatformLimits,
): RenderRefusal | undefined {
  for (const object of objects) {
    const refusal =
      imageRefusal(object, limits.allowedRegistries) ??
      replicasRefusal(object, limits.maxReplicas) ??
      storageRefusal(object, limits.maxStorage);
    if (refusal) return refusal;
  }
  return totalReplicasRefusal(objects, limits.maxReplicas);
}

/**
 * The instance's pods are all its workloads' together, as `spec.replicas` is for the built-in template: eight
 * Deployments of 10 replicas each are 80 pods of one instance, whatever `--max-replicas` says of each.
 */
function totalReplicasRefusal(objects: readonly RenderedObject[], max: number | undefined): RenderRefusal | undefined {
  if (max === undefined) return undefined;
  const { replicas } = renderUsage(objects);
  if (replicas <= BigInt(max)) return undefined;
  return {
    reason: "ChartReplicasNotAllowed",
    message:
      `the chart runs up to ${replicas} replicas in all (its workloads' spec.replicas, or their autoscalers' ` +
      `maxReplicas), more than the platform allows per instance (at most ${max}, --max-replicas)`,
  };
}

function imageRefusal(object: RenderedObject, allowed: readonly string[]): RenderRefusal | undefined {
  const template = podTemplateOf(object);
  if (!template || allowed.length === 0) return undefined;
  for (const field of containerLists) {
    for (const [index, container] of list(template.spec[field]).entries()) {
      const image = record(container)["image"];
      if (typeof image !== "string" || registryAllowing(allowed, image)) continue;
      return {
        reason: "ChartImageNotAllowed",
        message:
          `${objectName(object)} ${template.specPath}.${field}[${index}].image is ${JSON.stringify(image)}, not from ` +
          `a registry the platform allows (only ${allowed.join(", ")}, --allowed-registries)`,
      };
    }
  }
  return undefined;
}

function replicasRefusal(object: RenderedObject, max: number | undefined): RenderRefusal | undefined {
  if (max === undefined) return undefined;
  const kind = `${object.apiVersion}/${object.kind}`;
  const field = replicatedKinds.has(kind) ? "replicas" : autoscalerKinds.has(kind) ? "maxReplicas" : undefined;
  if (field === undefined) return undefined;
  const replicas = record(object["spec"])[field];
  if (typeof replicas !== "number" || replicas <= max) return undefined;
  return {
    reason: "ChartReplicasNotAllowed",
    message:
      `${objectName(object)} spec.${field} is ${replicas}, more than the platform allows per instance ` +
      `(at most ${max}, --max-replicas)`,
  };
}

function storageRefusal(object: RenderedObject, max: string | undefined): RenderRefusal | undefined {
  if (max === undefined || `${object.apiVersion}/${object.kind}` !== "apps/v1/StatefulSet") return undefined;
  const limit = parseQuantity(max);
  if (!limit) return undefined;
  for (const { path, written, size } of claimRequests(object)) {
    // A size that cannot be counted is refused before (claim-sizes.ts); one over the limit is refused here.
    if (!size || compareQuantities(size, limit) <= 0) continue;
    return {
      reason: "ChartStorageNotAllowed",
      message: `${objectName(object)} ${path} is ${String(written)}, more than the platform allows per volume (at most ${max}, --max-storage)`,
    };
  }
  return undefined;
}
