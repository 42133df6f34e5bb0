/**
 * Which volume claims of a namespace this platform keeps, and what to say about them before the namespace goes.
 * Deleting a namespace deletes every claim in it, whatever `storageReclaimPolicy` says: the policy is the
 * operator's promise when an instance is deleted, and a namespace's deletion goes around the operator. Pure: the
 * guard (kept-claims-guard.ts) reads the cluster and decides with these.
 */
import { instanceLabelValue, labelKeys, managedBy } from "../api/index.ts";
import { byCodeUnits } from "../api/code-unit-order.ts";

/** A claim as the guard reads it: any claim of the namespace. */
export interface ClaimSummary {
  readonly metadata: {
    readonly name?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string;
  };
  readonly spec?: { readonly resources?: { readonly requests?: { readonly storage?: string } } };
  readonly status?: { readonly capacity?: { readonly storage?: string } };
}

/** An instance of the namespace, as far as the decision needs it. */
export interface InstanceSummary {
  readonly metadata: { readonly name?: string };
  readonly spec?: { readonly storageReclaimPolicy?: unknown; readonly storage?: unknown; readonly chart?: unknown };
}

export interface KeptClaim {
  readonly name: string;
  /** Capacity when bound, else the request; "" when neither is known. */
  readonly size: string;
  /** The instance it belongs to, when that instance still exists. */
  readonly instance?: string;
  /** Not labelled by the operator: a chart's claim (its own labels), or one made by hand. */
  readonly foreign?: true;
}

/**
 * The claims deleting the namespace would take although nothing asked for their data to go: every claim not
 * already being deleted, except those of a live instance that says `storageReclaimPolicy: Delete` (the operator
 * deletes those itself when the instance goes). A claim whose instance is gone is kept: Retain left it there. So is
 * one the operator did not label (a chart's, one made by hand): its data is just as lost with the namespace.
 */
export function keptClaims(claims: readonly ClaimSummary[], instances: readonly InstanceSummary[]): KeptClaim[] {
  const byLabel = new Map(
    instances.map((instance) => [instanceLabelValue(instance.metadata.name ?? ""), instance] as const),
  );
  return claims
    .filter((claim) => !claim.metadata.deletionTimestamp)
    .flatMap((claim): KeptClaim[] => {
      const instance = byLabel.get(claim.metadata.labels?.[labelKeys.instance] ?? "");
      // Only an explicit Delete lets data go, as the operator reads it (operator/reconcile/finalize.ts), and only
      // from an instance that has volumes (storage, or a chart) and so a finalizer: claims kept from an earlier
      // namesake are nothing the one without storage would delete.
      const deletes =
        instance?.spec?.storageReclaimPolicy === "Delete" &&
        (instance.spec.storage !== undefined || instance.spec.chart !== undefined);
      if (deletes) return [];
      const size = claim.status?.capacity?.storage ?? claim.spec?.resources?.requests?.storage ?? "";
      const foreign = claim.metadata.labels?.[labelKeys.managedBy] !== managedBy && !instance;
      return [
        {
          name: claim.metadata.name ?? "",
          size,
          ...(instance?.metadata.name ? { instance: instance.metadata.name } : {}),
          ...(foreign ? { foreign: true as const } : {}),
        },
      ];
    })
    .sort((a, b) => byCodeUnits(a.name, b.name));
}

/**
 * Why deleting `namespace` would lose data, naming each claim, and the ways out. `refusing`: the guard stops the
 * delete (pulumi up, destroy); otherwise it is a preview's warning.
 */
export function keptClaimsMessage(namespace: string, kept: readonly KeptClaim[], refusing: boolean): string {
  const listed = kept
    .map((claim) => {
      const owner = claim.instance
        ? `instance ${claim.instance}`
        : claim.foreign
          ? "not the built-in template's"
          : "its instance is gone";
      const details = [claim.size, owner].filter((detail) => detail !== "").join(", ");
      return `${claim.name} (${details})`;
    })
    .join(", ");
  const count = kept.length === 1 ? "1 volume claim" : `${kept.length} volume claims`;
  const verdict = refusing
    ? `Refusing to delete namespace ${namespace}`
    : `Deleting namespace ${namespace} would delete its data`;
  return (
    `${verdict}: it holds ${count} whose data nothing asked to delete: ${listed}. ` +
    `A namespace's deletion deletes every claim in it, with the data. ` +
    `To keep the data, keep the namespace (retainOnDelete: true, or declare it in another stack); ` +
    `to let it go, delete the claims first (kubectl delete pvc -n ${namespace} ${kept.map((claim) => claim.name).join(" ")}).`
  );
}
