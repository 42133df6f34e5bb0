/**
 * Storage changes of a running instance, decided purely from what was observed. A StatefulSet's claim template is
 * immutable, and a claim can grow only where its StorageClass allows expansion, so growing storage is: grow each
 * existing claim, then re-create the StatefulSet with the new template while its pods keep running (orphaned and
 * adopted again). Where a claim cannot grow, nothing changes and a Degraded condition says why.
 */
import { compareQuantities, parseQuantity } from "../../api/index.ts";
import {
  dataVolumeName,
  desiredStatefulSet,
  isDataClaimOf,
  type DesiredInput,
  type DesiredStatefulSet,
} from "../desired/index.ts";
import type { ObservedClaim, ObservedStorageClass, ObservedWorkload } from "./observed.ts";
import type { Problem } from "./status.ts";

export interface StatefulSetPlan {
  /** What to apply. When the template cannot change, it keeps the live claim template, so the apply is valid. */
  readonly desired: DesiredStatefulSet;
  /** The claim template must grow: delete the StatefulSet with `propagationPolicy: Orphan`, then apply. */
  readonly recreate: boolean;
  /** Claims to grow to spec.storage before anything else. */
  readonly expand: readonly ObservedClaim[];
  readonly problem: Problem | undefined;
}

/** The instance's data claims among `claims` (by name, so a look-alike claim of someone else is never touched). */
export function dataClaims(claims: readonly ObservedClaim[], statefulSetName: string): ObservedClaim[] {
  return claims.filter((claim) => isDataClaimOf(claim.metadata.name ?? "", statefulSetName));
}

/** Claims that request less than `storage`. */
export function claimsSmallerThan(claims: readonly ObservedClaim[], storage: string): ObservedClaim[] {
  return claims.filter((claim) => isLess(claim.spec?.resources?.requests?.storage, storage));
}

/**
 * What to do about the StatefulSet of `input` given the live one, its data claims, and the StorageClasses of the
 * claims that must grow (`classes` by name; undefined when the class does not exist).
 */
export function planStatefulSet(
  input: DesiredInput,
  live: ObservedWorkload | undefined,
  claims: readonly ObservedClaim[],
  classes: ReadonlyMap<string, ObservedStorageClass | undefined>,
): StatefulSetPlan {
  const { spec } = input;
  const wanted = spec.storage ?? "";
  const desired = desiredStatefulSet(input);
  const template = live?.spec?.volumeClaimTemplates?.find((t) => t.metadata?.name === dataVolumeName);
  const liveSize = template?.spec?.resources?.requests?.storage;
  const liveClass = template?.spec?.storageClassName;
  // The apply must not touch the immutable template when the template is not going to change.
  const keep =
    template === undefined || liveSize === undefined
      ? desired
      : desiredStatefulSet({ ...input, spec: { ...spec, storage: liveSize, storageClassName: liveClass } });
  const unchanged = (problem: Problem | undefined): StatefulSetPlan => ({
    desired: keep,
    recreate: false,
    expand: [],
    problem,
  });

  if (template !== undefined && liveClass !== spec.storageClassName) {
    return unchanged({
      reason: "StorageClassChangeUnsupported",
      message:
        `spec.storageClassName is ${quote(spec.storageClassName)} but the volumes were provisioned with ` +
        `${quote(liveClass)}; a claim's class cannot change. Set spec.storageClassName back, or move the data to ` +
        "a new instance",
    });
  }
  if (liveSize !== undefined && isLess(wanted, liveSize)) {
    return unchanged({
      reason: "StorageShrinkUnsupported",
      message: `spec.storage is ${wanted} but the volumes have ${liveSize}; volumes can grow but not shrink. Set spec.storage to at least ${liveSize}`,
    });
  }

  const small = claimsSmallerThan(claims, wanted);
  const refused = small.filter(
    (claim) => classes.get(claim.spec?.storageClassName ?? "")?.allowVolumeExpansion !== true,
  );
  if (refused.length > 0) {
    const byClass = new Map<string, string[]>();
    for (const claim of refused) {
      const name = claim.spec?.storageClassName ?? "";
      byClass.set(name, [...(byClass.get(name) ?? []), claim.metadata.name ?? ""]);
    }
    const reasons = [...byClass].map(([name, claimNames]) =>
      name === ""
        ? `claims ${claimNames.join(", ")} have no StorageClass`
        : classes.get(name) === undefined
          ? `StorageClass ${quote(name)} of claims ${claimNames.join(", ")} does not exist`
          : `StorageClass ${quote(name)} of claims ${claimNames.join(", ")} does not allow volume expansion (allowVolumeExpansion is not true)`,
    );
    return unchanged({
      reason: "StorageExpansionUnsupported",
      message:
        `cannot grow the volumes to ${wanted}: ${reasons.join("; ")}. Nothing was changed and the volumes keep ` +
        "their size; an administrator can allow expansion on the StorageClass, or move the data to a new instance " +
        "with larger volumes",
    });
  }

  const templateGrows = liveSize !== undefined && isLess(liveSize, wanted);
  return { desired, recreate: templateGrows, expand: small, problem: undefined };
}

/** True when both parse as quantities and `a` < `b`. */
function isLess(a: string | undefined, b: string | undefined): boolean {
  const left = a === undefined ? undefined : parseQuantity(a);
  const right = b === undefined ? undefined : parseQuantity(b);
  return left !== undefined && right !== undefined && compareQuantities(left, right) < 0;
}

function quote(value: string | undefined): string {
  return value === undefined ? "(the default class)" : `"${value}"`;
}
