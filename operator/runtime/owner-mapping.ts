/**
 * Maps events of owned kinds (Deployment, StatefulSet, Service, ...) back to the key of the object that controls
 * them, like controller-runtime's EnqueueRequestForOwner with OnlyControllerOwner: only the ownerReference with
 * `controller: true` counts, and it must name the owner's group and kind (any version).
 */
import type { KubeObject, OwnerReference } from "../../kube/index.ts";
import { objectKeyOf, type ObjectKey } from "../../kube/object-key.ts";

/** The owner type to look for, e.g. `{ apiVersion: "example.com/v1", kind: "MyAppInstance" }`. */
export interface OwnerType {
  readonly apiVersion: string;
  readonly kind: string;
}

/** The group of an apiVersion: "apps/v1" → "apps", "v1" → "" (the core group). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/** The controller ownerReference of `object` if it names `owner`'s group and kind. */
export function controllerOwnerRef(object: KubeObject, owner: OwnerType): OwnerReference | undefined {
  const group = groupOf(owner.apiVersion);
  return object.metadata.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === owner.kind && groupOf(ref.apiVersion) === group,
  );
}

/**
 * The work-queue key of the controlling owner of `object`, or undefined when no such owner is set. Owner references
 * cannot cross namespaces, so the owner lives in the object's namespace.
 */
export function controllerOwnerKey(object: KubeObject, owner: OwnerType): ObjectKey | undefined {
  const ref = controllerOwnerRef(object, owner);
  if (!ref) return undefined;
  return objectKeyOf({ namespace: object.metadata.namespace, name: ref.name });
}
