/**
 * Leaving a chart for the built-in template (`spec.chart` removed, or the platform's default chart unset): what
 * happens to the objects the chart rendered, decided without I/O. The built-in template takes over the objects it
 * makes under the same names (its Deployment or StatefulSet and its Services: server-side apply under the same
 * field manager replaces the chart's fields with its own); every other object the chart rendered, and the instance
 * controls, is pruned. Storage rules hold across the switch: a StatefulSet with volumes that the built-in template
 * would not keep (another name, another claim template, smaller volumes, or pods it cannot adopt) refuses the
 * switch with a reason, and nothing is changed. Pure.
 *
 * The other direction needs nothing of its own: the chart branch lists the built-in children too (by the
 * instance's label) and prunes what the render does not replace, under the same volume rules.
 */
import {
  desiredStatefulSet,
  governingServiceName,
  isControlledBy,
  selectorLabels,
  serviceName,
  workloadName,
  type DesiredInput,
} from "../desired/index.ts";
import { objectName, type RenderRefusal, type RenderedObject } from "../../chart/index.ts";
import { objectId, volumeRefusal, type LiveObject } from "./plan.ts";
import { byCodeUnits } from "../../api/code-unit-order.ts";

export type TemplateSwitchPlan<T extends LiveObject> =
  { readonly ok: true; readonly prune: readonly T[] } | { readonly ok: false; readonly refusal: RenderRefusal };

/**
 * What to prune of `chartObjects` (live objects a chart rendered for the instance) now that the built-in
 * template renders `input`, or why the switch is refused.
 */
export function templateSwitchPlan<T extends LiveObject>(
  chartObjects: readonly T[],
  input: DesiredInput,
): TemplateSwitchPlan<T> {
  const { name } = input.metadata;
  const uid = input.metadata.uid;
  const owned = chartObjects.filter(
    (object) => isControlledBy(object.metadata.ownerReferences, uid) && !object.metadata.deletionTimestamp,
  );
  const statefulSet = input.spec.storage === undefined ? undefined : desiredStatefulSet(input);
  const refusal = volumeRefusal(
    owned.filter((object) => object.kind === "StatefulSet"),
    statefulSet ? [statefulSet as unknown as RenderedObject] : [],
    uid,
    "builtInTemplate",
  );
  if (refusal) return { ok: false, refusal };
  if (statefulSet) {
    const kept = owned.find((object) => object.kind === "StatefulSet" && object.metadata.name === workloadName(name));
    const selector = (kept?.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector;
    if (kept && !sameLabels(selector?.matchLabels, selectorLabels(name))) {
      // The selector is immutable, so the template re-creates the StatefulSet; pods it does not select would be
      // orphaned beside the new ones, on the same volumes.
      return {
        ok: false,
        refusal: {
          reason: "BuiltInTemplateDropsVolumes",
          message:
            `the built-in template (spec.chart was removed) cannot take over ${objectName({ kind: "StatefulSet", metadata: kept.metadata })}, ` +
            `whose pods keep volumes: its selector ${JSON.stringify(selector?.matchLabels ?? {})} is not the template's ` +
            `${JSON.stringify(selectorLabels(name))}; volumes are never dropped implicitly`,
        },
      };
    }
  }
  // The names the template's builders give its children (api/child-names.ts), of either workload kind: the
  // template retires the other kind itself once its own workload is ready.
  const takenOver = new Set(
    [
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: workloadName(name) } },
      { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: workloadName(name) } },
      { apiVersion: "v1", kind: "Service", metadata: { name: serviceName(name) } },
      { apiVersion: "v1", kind: "Service", metadata: { name: governingServiceName(name) } },
    ].map(objectId),
  );
  const prune = owned.filter(
    (object) =>
      !takenOver.has(
        objectId({ apiVersion: object.apiVersion ?? "", kind: object.kind ?? "", metadata: object.metadata }),
      ),
  );
  return { ok: true, prune };
}

function sameLabels(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const left = Object.entries(a ?? {}).sort(([x], [y]) => byCodeUnits(x, y));
  const right = Object.entries(b).sort(([x], [y]) => byCodeUnits(x, y));
  return JSON.stringify(left) === JSON.stringify(right);
}
