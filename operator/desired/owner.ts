/** The ownerReference that makes an instance the controller of its children, and whose an existing child is. */
import { apiVersion, kind } from "../../api/index.ts";
import type { InstanceIdentity, OwnerReference } from "./objects.ts";

/**
 * A controller reference, as controller-runtime's SetControllerReference writes it: the garbage collector
 * removes children whose owner is gone, and `blockOwnerDeletion` keeps a foreground deletion of the instance
 * waiting for them.
 */
export function controllerReference(instance: InstanceIdentity): OwnerReference {
  return {
    apiVersion,
    kind,
    name: instance.name,
    uid: instance.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** True when `references` name `uid` as their controller. */
export function isControlledBy(
  references: readonly { readonly uid?: string; readonly controller?: boolean }[] | undefined,
  uid: string,
): boolean {
  return (references ?? []).some((reference) => reference.controller === true && reference.uid === uid);
}

/**
 * Whose an object named like a child of the instance `uid` is, as a status message says it, when the instance is
 * not its controller: "controlled by Deployment other", or "not the instance's (it has no controller)"; undefined
 * when the instance controls it. An object without a controller is not free to take: it may be a platform's that the
 * tenant may not edit, and with the instance's controller reference on it the garbage collector would delete it
 * with the instance. The built-in template and charts refuse both alike (`ChildOwnedElsewhere`).
 */
export function heldElsewhere(
  references: readonly Partial<Pick<OwnerReference, "uid" | "controller" | "kind" | "name">>[] | undefined,
  uid: string,
): string | undefined {
  if (isControlledBy(references, uid)) return undefined;
  const controller = (references ?? []).find((reference) => reference.controller === true);
  return controller
    ? `controlled by ${controller.kind ?? "an object"} ${controller.name ?? ""}`.trimEnd()
    : "not the instance's (it has no controller)";
}
