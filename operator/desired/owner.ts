/** The ownerReference that makes an instance the controller of its children. */
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
