/**
 * A namespace's own chart sources (api/namespace-chart-sources.ts): the platform's allow-list narrowed by the
 * Namespace's annotation, and the words a refusal uses, shared by the operator's webhook (at the door) and the
 * chart engine (at the fetch). Pure.
 *
 * Narrowing is the intersection of two sets of URL prefixes: an entry inside a platform prefix stays as written
 * (`oci://ghcr.io/org/team-a/` within `oci://ghcr.io/org/`), one that contains a platform prefix gives that prefix
 * (`oci://ghcr.io/` gives `oci://ghcr.io/org/`), any other grants nothing. So the platform's list stays the one
 * boundary of where the operator fetches from, and which hosts may be private addresses is still its alone.
 */
import { namespaceChartSourcesAnnotation, type ChartSpec } from "../api/index.ts";
import { chartSourceProblems, chartSourcesFlag, normalizePrefix, type SourcePolicy } from "./source-policy.ts";

/** Where the list a source was judged against comes from: the platform's, or a namespace's annotation on it. */
export type SourceScope = { readonly namespace: string } | undefined;

/** The sources `platform` allows in a namespace whose annotation reads `annotation` (undefined: no annotation). */
export function namespacePolicy(platform: SourcePolicy, annotation: string | undefined): SourcePolicy {
  if (annotation === undefined) return platform;
  const allowed = new Set<string>();
  for (const entry of annotationEntries(annotation)) {
    if (chartSourceProblems([entry]).length > 0) continue;
    const prefix = normalizePrefix(entry);
    for (const outer of platform.allowed) {
      if (prefix.startsWith(outer)) allowed.add(prefix);
      else if (outer.startsWith(prefix)) allowed.add(outer);
    }
  }
  return { allowed: [...allowed], privateHosts: platform.privateHosts, listedOrigins: platform.listedOrigins };
}

/**
 * True when `chart` names the platform's own default chart (`platformChart`: the same place and chart, any
 * version): the platform chose it for every namespace, so no annotation narrows it away.
 */
export function sameChartSource(chart: ChartSpec, platformChart: ChartSpec | undefined): boolean {
  return (
    platformChart !== undefined &&
    chart.oci === platformChart.oci &&
    chart.repo === platformChart.repo &&
    chart.name === platformChart.name &&
    chart.configMap === platformChart.configMap
  );
}

/** The annotation's entries: separated by commas or white space. */
export function annotationEntries(annotation: string): string[] {
  return annotation.split(/[\s,]+/).filter((entry) => entry !== "");
}

/**
 * The refusal of `source` (described as chart/sources.ts `describeSource` does) under `policy`, from `scope`;
 * `allowList` names the platform's list.
 */
export function sourceRefusal(
  source: string,
  policy: SourcePolicy,
  scope: SourceScope,
  allowList: string = chartSourcesFlag,
): string {
  const allows = policy.allowed.length > 0 ? policy.allowed.join(", ") : "ConfigMap charts only";
  if (scope === undefined) {
    return (
      `${source} is not an allowed chart source: the platform allows ${allows} (${allowList}); ` +
      "use a chart in a ConfigMap, or ask the platform to add the source"
    );
  }
  return (
    `${source} is not an allowed chart source in namespace ${scope.namespace}: its annotation ` +
    `${namespaceChartSourcesAnnotation} allows ${allows}, within the platform's ` +
    `${allowList}; use a chart in a ConfigMap, or ask the platform to add the source to the namespace`
  );
}
