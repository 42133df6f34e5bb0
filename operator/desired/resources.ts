/** The app container's CPU and memory requests and limits: the spec's, over documented defaults. */
import { compareQuantities, computeResources, parseQuantity } from "../../api/index.ts";
import type { ResourceList, ResourceRequirements } from "./objects.ts";

/** Requests and limits as a spec or the defaults state them: each may leave out any resource. */
export interface ResourceSpec {
  readonly requests?: ResourceList;
  readonly limits?: ResourceList;
}

/**
 * What the spec sets, and the default for what it leaves out. A default request above a limit the spec sets is
 * lowered to that limit (as Kubernetes itself defaults a missing request to the limit), so a spec that only says
 * `limits.memory: 64Mi` still makes a valid pod.
 */
export function desiredResources(spec: ResourceSpec | undefined, defaults: ResourceSpec): ResourceRequirements {
  const limits: Record<string, string> = { ...defaults.limits, ...spec?.limits };
  const requests: Record<string, string> = {};
  for (const resource of computeResources) {
    const requested = spec?.requests?.[resource];
    const fallback = defaults.requests?.[resource];
    const limit = limits[resource];
    if (requested !== undefined) requests[resource] = requested;
    else if (fallback !== undefined)
      requests[resource] = limit !== undefined && isAbove(fallback, limit) ? limit : fallback;
  }
  // A default limit below a request the spec sets would make the pod invalid: the limit rises to the request.
  for (const resource of computeResources) {
    const request = requests[resource];
    const limit = limits[resource];
    if (
      request !== undefined &&
      limit !== undefined &&
      spec?.limits?.[resource] === undefined &&
      isAbove(request, limit)
    ) {
      limits[resource] = request;
    }
  }
  return { requests, limits };
}

function isAbove(a: string, b: string): boolean {
  const [left, right] = [parseQuantity(a), parseQuantity(b)];
  return left !== undefined && right !== undefined && compareQuantities(left, right) > 0;
}
