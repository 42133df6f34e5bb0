/**
 * The platform admin's allow-list of kinds that Helm charts may render (`MyAppOperator` arg `chartKinds`), as RBAC
 * rules: the operator can create only what a chart is allowed to render, and read and prune only those kinds.
 * Secrets are write-only (create and patch): the operator never reads credentials.
 */
import { chartKindName, defaultChartKinds, parseChartKinds, type ChartKind } from "../api/index.ts";
import type { OperatorRule } from "./rbac.ts";

/**
 * Verbs for a kind charts render: list and watch (the operator's informers cache its own objects of every allowed
 * kind, so a hand edit wakes the instance, and compare and prune read from that cache), get (a live look before
 * an object is created, so a namesake of someone else's is never taken over), create and patch (server-side
 * apply) and delete (prune).
 */
const chartVerbs = ["get", "list", "watch", "create", "patch", "delete"] as const;

/** The rules that let the operator apply, compare and prune chart objects of `kinds`. */
export function chartKindRules(kinds: readonly ChartKind[]): OperatorRule[] {
  const rules: OperatorRule[] = [
    // The chart source: a packed chart in a ConfigMap of the instance's namespace.
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
  ];
  for (const kind of kinds) {
    const group = kind.apiVersion.includes("/") ? kind.apiVersion.slice(0, kind.apiVersion.indexOf("/")) : "";
    rules.push({
      apiGroups: [group],
      resources: [kind.plural],
      verbs: kind.writeOnly ? ["create", "patch"] : [...chartVerbs],
    });
  }
  return rules;
}

/** The allow-list from the component's argument, or the names that charts cannot render. */
export function resolveChartKinds(
  names: readonly string[] | undefined,
): { ok: true; kinds: readonly ChartKind[] } | { ok: false; message: string } {
  if (names === undefined) return { ok: true, kinds: defaultChartKinds };
  const parsed = parseChartKinds(names);
  if (parsed.ok) return parsed;
  return {
    ok: false,
    message: `${parsed.unknown.map((name) => `"${name}"`).join(", ")} cannot be rendered by charts; choose from ${defaultChartKinds.map(chartKindName).join(", ")}`,
  };
}

/** The operator's `--chart-kinds` flag, when the allow-list is not the default one. */
export function chartKindsFlag(kinds: readonly ChartKind[]): string[] {
  if (kinds.length === defaultChartKinds.length) return [];
  return [`--chart-kinds=${kinds.map(chartKindName).join(",")}`];
}
