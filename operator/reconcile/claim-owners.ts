/**
 * The volume claims of an instance's StatefulSets and the owner references those StatefulSets left on them, decided
 * without I/O, for the finalizer (finalize.ts). With `whenDeleted: Delete` the StatefulSet controller puts an owner
 * reference to the StatefulSet on each of its claims, and takes it off again, once the policy says Retain, only
 * from claims whose pod exists: while one is there, the garbage collector deletes the claim with the StatefulSet,
 * whatever the instance's storageReclaimPolicy says. The operator gives every StatefulSet Retain (the built-in
 * template and operator/chart/plan.ts), but a StatefulSet from an earlier version, or one whose render was
 * pending or refused when it would have changed, may still say Delete or have left references behind. Pure.
 */
import type { JsonPatchOperation } from "../../kube/object-client.ts";
import type { KubeObject } from "../../kube/index.ts";

/** A StatefulSet as the finalizer reads it. */
export interface ClaimMaker extends KubeObject {
  readonly spec?: {
    readonly persistentVolumeClaimRetentionPolicy?: { readonly whenDeleted?: string; readonly whenScaled?: string };
    readonly volumeClaimTemplates?: readonly { readonly metadata?: { readonly name?: string } }[];
  };
  readonly status?: { readonly observedGeneration?: number };
}

/** Whether the StatefulSet keeps every claim, on deletion and on scale-down: both say Retain (or are unset). */
export function retainsClaims(statefulSet: ClaimMaker): boolean {
  const policy = statefulSet.spec?.persistentVolumeClaimRetentionPolicy;
  return (policy?.whenDeleted ?? "Retain") === "Retain" && (policy?.whenScaled ?? "Retain") === "Retain";
}

/**
 * Whether the StatefulSet controller has acted on the StatefulSet's current spec (its status observes the
 * generation): after its policy became Retain, it adds no owner reference to a claim any more.
 */
export function observed(statefulSet: ClaimMaker): boolean {
  return (statefulSet.status?.observedGeneration ?? 0) >= (statefulSet.metadata.generation ?? 1);
}

/**
 * The patch that makes the StatefulSet keep every claim (Retain on deletion and scale-down), only while it is the
 * object with this uid: a namesake created since it was read fails the test (422) and is left alone.
 */
export function retainClaimsPatch(statefulSet: ClaimMaker): JsonPatchOperation[] {
  return [
    { op: "test", path: "/metadata/uid", value: statefulSet.metadata.uid ?? "" },
    {
      op: "add",
      path: "/spec/persistentVolumeClaimRetentionPolicy",
      value: { whenDeleted: "Retain", whenScaled: "Retain" },
    },
  ];
}

/**
 * The patch that takes the owner references to the StatefulSets `statefulSetUids` off `claim`, or none when it has
 * none: each removal is preceded by a test of the uid at that index, last index first (so earlier indexes hold), and
 * a claim changed since it was read fails the test (422) and is changed not at all: someone else's reference is
 * never removed.
 */
export function releaseClaimPatch(claim: KubeObject, statefulSetUids: ReadonlySet<string>): JsonPatchOperation[] {
  const references = claim.metadata.ownerReferences ?? [];
  const operations: JsonPatchOperation[] = [];
  for (let index = references.length - 1; index >= 0; index -= 1) {
    const uid = references[index]?.uid;
    if (uid === undefined || !statefulSetUids.has(uid)) continue;
    operations.push(
      { op: "test", path: `/metadata/ownerReferences/${index}/uid`, value: uid },
      { op: "remove", path: `/metadata/ownerReferences/${index}` },
    );
  }
  return operations;
}

/**
 * The claims among `claims` that the StatefulSet made, by the names the StatefulSet controller gives them:
 * `<claim template>-<StatefulSet>-<ordinal>` for each of its volumeClaimTemplates, the ordinal digits only. A claim
 * that carries an owner reference to another StatefulSet (a look-alike name of someone else's) is not one of them.
 */
export function claimsOf<T extends KubeObject>(statefulSet: ClaimMaker, claims: readonly T[]): T[] {
  const name = statefulSet.metadata.name ?? "";
  const uid = statefulSet.metadata.uid;
  const templates = (statefulSet.spec?.volumeClaimTemplates ?? []).flatMap((template) =>
    template.metadata?.name ? [template.metadata.name] : [],
  );
  if (name === "" || templates.length === 0) return [];
  return claims.filter((claim) => {
    const claimName = claim.metadata.name ?? "";
    const named = templates.some((template) => {
      const prefix = `${template}-${name}-`;
      return claimName.startsWith(prefix) && /^[0-9]+$/.test(claimName.slice(prefix.length));
    });
    const otherSet = (claim.metadata.ownerReferences ?? []).some(
      (reference) => reference.kind === "StatefulSet" && reference.uid !== uid,
    );
    return named && !otherSet;
  });
}
