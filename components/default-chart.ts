/**
 * The platform's default chart (`MyAppOperator` arg `defaultChart`): the chart every instance whose spec names
 * none is rendered with, passed to the operator as `--default-chart`. An OCI registry or an HTTP repository suits
 * a platform-wide default; a `configMap` source is looked up in each instance's own namespace.
 */
import { chartSchema, type ChartSpec } from "../api/index.ts";

/** The checked default chart, or what is wrong with it (each issue naming its field). */
export function resolveDefaultChart(
  input: unknown,
): { ok: true; chart: ChartSpec | undefined } | { ok: false; messages: string[] } {
  if (input === undefined) return { ok: true, chart: undefined };
  const result = chartSchema.safeParse(input);
  if (result.success) return { ok: true, chart: result.data };
  return {
    ok: false,
    messages: result.error.issues.map(
      (issue) => `defaultChart${issue.path.map((key) => `.${String(key)}`).join("")}: ${issue.message}`,
    ),
  };
}

/** The operator's `--default-chart` flag, when the platform has a default chart. */
export function defaultChartFlag(chart: ChartSpec | undefined): string[] {
  return chart ? [`--default-chart=${JSON.stringify(chart)}`] : [];
}
