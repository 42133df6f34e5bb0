/**
 * The I/O of a switch away from a chart to the built-in template (the decision is switch.ts's): before the template
 * applies its children, find what a chart rendered for the instance and decide; once they are applied, prune the
 * chart's leftovers. Without chart objects (every instance that never had a chart) it costs reads from the cache
 * only.
 */
import { defaultChartKinds, type ChartKind, type MyAppInstanceSpec } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import type { RenderRefusal } from "../../chart/index.ts";
import { chartObjectSelector, labelledObjects, pruneObject, type ChartSession } from "./apply.ts";
import { templateSwitchPlan } from "./switch.ts";

/** What a switch to the built-in template leaves to prune, or why it is refused. */
export type TemplateSwitch =
  | { readonly ok: true; readonly prune: readonly KubeObject[] }
  | { readonly ok: false; readonly refusal: RenderRefusal };

/** The chart objects of the instance the built-in template `spec` does not take over, or the refusal. */
export async function planTemplateSwitch(
  session: ChartSession,
  spec: MyAppInstanceSpec,
  allowed: readonly ChartKind[] = defaultChartKinds,
): Promise<TemplateSwitch> {
  const objects = await labelledObjects(session, allowed, [chartObjectSelector(session.key.name)]);
  if (objects.length === 0) return { ok: true, prune: [] };
  const uid = session.instance.metadata.uid ?? "";
  return templateSwitchPlan(objects, { metadata: { ...session.key, uid }, spec });
}

/** Deletes the leftovers of a chart the instance no longer uses. */
export async function pruneChartLeftovers(session: ChartSession, leftovers: readonly KubeObject[]): Promise<void> {
  for (const object of leftovers) {
    await pruneObject(
      session,
      object,
      "the instance no longer uses a chart and the built-in template does not make it",
    );
  }
}
