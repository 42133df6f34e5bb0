/**
 * Storage of an instance, decided purely from what was observed (the plan; storage.ts applies it).
 *
 * Provisioning: a claim waits for its StorageClass to make its volume. A class that does not exist (or no default
 * class, for claims that name none) leaves the claims and pods Pending forever, so the instance reports it as a
 * Degraded condition instead of Progressing without end.
 *
 * Growth: a StatefulSet's claim template is immutable, and a claim can grow only where its StorageClass allows
 * expansion, so growing storage is: grow each existing claim, then re-create the StatefulSet with the new template
 * while its pods keep running (orphaned and adopted again). Where a claim cannot grow, nothing changes and a
 * Degraded condition says why. Growth is complete only when every claim's status.capacity has reached the size,
 * which is what the resizer reports, not when the request was written (see volumeGrowth).
 *
 * The StatefulSet's serviceName is immutable too: a StatefulSet made before the headless governing Service existed
 * is re-created the same way, its pods kept running.
 */
import { compareQuantities, parseQuantity } from "../../api/index.ts";
import {
  claimName,
  dataVolumeName,
  desiredStatefulSet,
  claimOrdinal,
  isDataClaimOf,
  type DesiredInput,
  type DesiredStatefulSet,
} from "../desired/index.ts";
import type { ObservedClaim, ObservedStorageClass, ObservedWorkload } from "./observed.ts";
import type { Problem, Step } from "./status.ts";

export interface StatefulSetPlan {
  /**
   * What to apply. When the StatefulSet is not re-created, it keeps the live claim template and serviceName
   * (both immutable), so the apply is valid.
   */
  readonly desired: DesiredStatefulSet;
  /**
   * The claim template must grow or the serviceName change: delete the StatefulSet with
   * `propagationPolicy: Orphan`, then apply. `recreateReason` says why, for the event and the status.
   */
  readonly recreate: boolean;
  readonly recreateReason?: string;
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
  const liveServiceName = live?.spec?.serviceName;
  // The apply must not touch the immutable template and serviceName when the StatefulSet is not re-created.
  const keepTemplate =
    template === undefined || liveSize === undefined
      ? desired
      : desiredStatefulSet({ ...input, spec: { ...spec, storage: liveSize, storageClassName: liveClass } });
  const keep: DesiredStatefulSet =
    liveServiceName === undefined || liveServiceName === desired.spec.serviceName
      ? keepTemplate
      : { ...keepTemplate, spec: { ...keepTemplate.spec, serviceName: liveServiceName } };
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
  const serviceChanges = liveServiceName !== undefined && liveServiceName !== desired.spec.serviceName;
  if (!templateGrows && !serviceChanges) return { desired, recreate: false, expand: small, problem: undefined };
  const reasons = [
    ...(templateGrows ? [`${wanted} volume claims`] : []),
    ...(serviceChanges ? [`the headless governing Service ${desired.spec.serviceName}`] : []),
  ];
  return { desired, recreate: true, recreateReason: reasons.join(" and "), expand: small, problem: undefined };
}

/** Volumes still growing (a Step), or a resize the storage driver cannot do (a Problem). */
export type VolumeGrowth = { readonly step: Step } | { readonly problem: Problem };

/** Claim conditions that say a resize is under way or failed (core/v1 PersistentVolumeClaimConditionType). */
const resizeConditions = ["Resizing", "FileSystemResizePending", "ControllerResizeError", "NodeResizeError"];

/**
 * How far growing the Bound data claims to `storage` has come, judged from what the resizer reports: each claim's
 * `status.capacity`, its resize conditions and `status.allocatedResourceStatuses`. A claim whose request says
 * `storage` but whose capacity is still smaller is growing (a Step: Progressing, the instance is not Ready yet);
 * a resize the driver declared infeasible is a Problem. A resize error the resizer will retry stays a Step, with
 * its message. Undefined when every Bound claim of a running replica has the capacity (claims still Pending get
 * the new size when they are provisioned).
 */
export function volumeGrowth(
  claims: readonly ObservedClaim[],
  storage: string,
  statefulSet: { readonly name: string; readonly replicas: number },
): VolumeGrowth | undefined {
  // Only the claims of running replicas: a claim kept from a scale-down has no pod to finish its resize with.
  // Judged from the claims that exist, never by counting to `replicas` (the tenant's, up to 2^31 - 1).
  const growing = claims.filter(
    (claim) =>
      isOrdinalBelow(claim, statefulSet.name, statefulSet.replicas) &&
      claim.status?.phase === "Bound" &&
      isLess(claim.status.capacity?.storage ?? "0", storage),
  );
  if (growing.length === 0) return undefined;
  const infeasible = growing.filter((claim) =>
    (claim.status?.allocatedResourceStatuses?.["storage"] ?? "").endsWith("Infeasible"),
  );
  if (infeasible.length > 0) {
    const problem: Problem = {
      reason: "VolumeExpansionInfeasible",
      message:
        `the storage driver cannot grow volume claims ${listNames(infeasible.map(nameOf))} to ${storage} ` +
        `(${infeasible.map((claim) => `${nameOf(claim)}: ${claim.status?.allocatedResourceStatuses?.["storage"]}`).join(", ")}); ` +
        "their data is intact at the old size. Set spec.storage to a size the driver supports, or ask an administrator",
    };
    return { problem };
  }
  const details = growing.map((claim) => {
    const condition = (claim.status?.conditions ?? []).find(
      (c) => c.status === "True" && resizeConditions.includes(c.type ?? ""),
    );
    const have = claim.status?.capacity?.storage ?? "nothing";
    return `${nameOf(claim)} has ${have}${condition ? ` (${condition.type}${condition.message ? `: ${condition.message}` : ""})` : ""}`;
  });
  return {
    step: { reason: "ExpandingVolumes", message: `growing volume claims to ${storage}: ${listNames(details)}` },
  };
}

function nameOf(claim: ObservedClaim): string {
  return claim.metadata.name ?? "";
}

/**
 * Annotations that mark the cluster's default StorageClass, as the DefaultStorageClass admission plugin reads them
 * (the beta one is still honoured).
 */
export const defaultClassAnnotations = [
  "storageclass.kubernetes.io/is-default-class",
  "storageclass.beta.kubernetes.io/is-default-class",
] as const;

/** Claims waiting for one StorageClass: the first few names, for messages, and how many there are. */
export interface WaitingClaims {
  readonly names: readonly string[];
  readonly count: number;
}

/** How many claim names a message shows; the rest are counted. */
const shownNames = 3;

/**
 * The data claims of `statefulSet` (ordinals 0 to replicas - 1) that are not Bound yet, by the StorageClass that
 * has to provision them: a claim not made yet will get the class of the claim template; one that exists keeps the
 * class it was made with. The key `undefined` collects claims that name no class (the cluster's default class
 * provisions those). A claim with an explicit empty class waits for a volume made by hand, not for a class, so it
 * is left out. Empty when every volume is there, so a running instance costs no StorageClass read. Work and
 * memory follow the claims that exist, not `replicas` (the tenant's, up to 2^31 - 1): the ones not made yet are
 * counted, and only the first few are named.
 */
export function unboundClaimsByClass(
  statefulSet: DesiredStatefulSet,
  claims: readonly ObservedClaim[],
): Map<string | undefined, WaitingClaims> {
  const name = statefulSet.metadata.name;
  const replicas = statefulSet.spec.replicas;
  const templateClass = statefulSet.spec.volumeClaimTemplates.find((t) => t.metadata.name === dataVolumeName)?.spec
    .storageClassName;
  const waiting = new Map<string | undefined, { names: string[]; count: number }>();
  const wait = (className: string | undefined, claim: string) => {
    if (className === "") return;
    const entry = waiting.get(className) ?? { names: [], count: 0 };
    if (entry.names.length < shownNames) entry.names.push(claim);
    entry.count++;
    waiting.set(className, entry);
  };
  const made = new Set<number>();
  for (const claim of claims) {
    const ordinal = claimOrdinal(claim.metadata.name ?? "", name);
    if (ordinal === undefined || ordinal >= replicas || made.has(ordinal)) continue;
    made.add(ordinal);
    if (claim.status?.phase !== "Bound") wait(claim.spec?.storageClassName, claimName(name, ordinal));
  }
  // The claims not made yet, in ordinal order: named while there is room in the message, then counted.
  const notMade = replicas - made.size;
  if (notMade > 0 && templateClass !== "") {
    for (let ordinal = 0, named = 0; ordinal < replicas && named < shownNames; ordinal++) {
      if (made.has(ordinal)) continue;
      wait(templateClass, claimName(name, ordinal));
      named++;
    }
    const entry = waiting.get(templateClass);
    if (entry) entry.count += notMade - Math.min(notMade, shownNames);
  }
  return waiting;
}

/**
 * Why the claims in `waiting` (from `unboundClaimsByClass`) cannot be provisioned, if they cannot: a class they
 * name does not exist (`StorageClassNotFound`), or they name none and no class is the default
 * (`NoDefaultStorageClass`). `classes` are the StorageClasses that exist among those the claims need (every class
 * when some need the default). Undefined when each claim has a class to provision it; whether that class works
 * is its provisioner's business. Names the first class that is missing; the next one shows once it is fixed.
 */
export function storageClassProblem(
  waiting: ReadonlyMap<string | undefined, WaitingClaims>,
  classes: readonly ObservedStorageClass[],
): Problem | undefined {
  const immutable = "spec.storageClassName cannot change once spec.storage is set";
  for (const [className, claims] of waiting) {
    const claimList = `volume claims ${listNames(claims.names, claims.count)}`;
    if (className === undefined) {
      if (classes.some(isDefaultClass)) continue;
      return {
        reason: "NoDefaultStorageClass",
        message:
          `spec.storageClassName is not set and the cluster has no default StorageClass (annotated ` +
          `${defaultClassAnnotations[0]}: "true"), so ${claimList} cannot be provisioned and their pods cannot ` +
          "start. Mark a StorageClass as the default and the instance continues by itself, or delete the instance " +
          `(and any Pending claims it leaves) and create it again with spec.storageClassName set: ${immutable}`,
      };
    }
    if (classes.some((c) => c.metadata.name === className)) continue;
    return {
      reason: "StorageClassNotFound",
      message:
        `StorageClass "${className}" does not exist, so ${claimList} cannot be provisioned and their pods cannot ` +
        `start. Create StorageClass "${className}" and the instance continues by itself, or delete the instance ` +
        `(and any Pending claims it leaves) and create it again with a StorageClass that exists: ${immutable}`,
    };
  }
  return undefined;
}

function isDefaultClass(storageClass: ObservedStorageClass): boolean {
  const annotations = storageClass.metadata.annotations ?? {};
  return defaultClassAnnotations.some((key) => annotations[key] === "true");
}

/** At most three names, so a large instance does not make a huge condition message. */
function listNames(names: readonly string[], count = names.length): string {
  const shown = names.slice(0, shownNames).join(", ");
  const more = count - Math.min(names.length, shownNames);
  return more > 0 ? `${shown} and ${more} more` : shown;
}

function isOrdinalBelow(claim: ObservedClaim, statefulSetName: string, replicas: number): boolean {
  const ordinal = claimOrdinal(claim.metadata.name ?? "", statefulSetName);
  return ordinal !== undefined && ordinal < replicas;
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
