/**
 * A chart's volume claims, found by their names: the StatefulSet controller names each claim
 * `<claim template>-<StatefulSet>-<ordinal>` and labels it as the chart's template says, not as the operator labels
 * its own, so only the names tie a chart's claims to the instance whose StatefulSet made them (kept-claims.ts counts
 * them). Pure.
 */
import { apiVersion as instanceApiVersion, kind as instanceKind } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { chartInstanceLabel } from "../chart/owned.ts";
import { claimsOf, type ClaimMaker } from "../reconcile/claim-owners.ts";

/** The claim makers of a namespace, by the `<claim template>-<StatefulSet>` their claims' names begin with. */
export type ChartClaimMakers = ReadonlyMap<
  string,
  readonly { readonly statefulSet: ClaimMaker; readonly instance: string }[]
>;

/**
 * The StatefulSets among `statefulSets` that an instance controls as its chart's (its chart label: the built-in
 * template's claims carry their instance's label) and that make claims, by their claims' prefix.
 */
export function chartClaimMakers(statefulSets: readonly ClaimMaker[]): ChartClaimMakers {
  const makers = new Map<string, { readonly statefulSet: ClaimMaker; readonly instance: string }[]>();
  for (const statefulSet of statefulSets) {
    if (statefulSet.metadata.labels?.[chartInstanceLabel] === undefined) continue;
    const controller = statefulSet.metadata.ownerReferences?.find(
      (reference) =>
        reference.controller === true && reference.apiVersion === instanceApiVersion && reference.kind === instanceKind,
    );
    if (!controller) continue;
    for (const template of statefulSet.spec?.volumeClaimTemplates ?? []) {
      const name = template.metadata?.name;
      if (!name) continue;
      const prefix = `${name}-${statefulSet.metadata.name ?? ""}`;
      makers.set(prefix, [...(makers.get(prefix) ?? []), { statefulSet, instance: controller.name }]);
    }
  }
  return makers;
}

/** The instance whose StatefulSet made `claim`, by the claim's name, or undefined (claim-owners.ts `claimsOf`). */
export function chartClaimInstance(claim: KubeObject, makers: ChartClaimMakers): string | undefined {
  const prefix = /^(.+)-[0-9]+$/.exec(claim.metadata.name ?? "")?.[1];
  if (prefix === undefined) return undefined;
  return makers.get(prefix)?.find((maker) => claimsOf(maker.statefulSet, [claim]).length > 0)?.instance;
}
