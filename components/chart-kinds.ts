/**
 * The platform admin's allow-list of kinds that Helm charts may render (`MyAppOperator` arg `chartKinds`), as RBAC
 * rules: the operator can create only what a chart is allowed to render, and read and prune only those kinds.
 * Secrets are write-only (create and patch): the operator never reads credentials.
 *
 * By default the list is the built-in template's kinds ({@link defaultChartKinds}: Deployment, StatefulSet,
 * Service), which the operator holds anyway; every wider kind ({@link renderableChartKinds}) is opt-in.
 * rbac-objects.ts grants the list in a Role per watched namespace when the operator watches a list of namespaces,
 * and cluster-wide only when it watches them all.
 */
import {
  chartKindName,
  defaultChartKinds,
  parseChartKinds,
  renderableChartKinds,
  type ChartKind,
} from "../api/index.ts";
import { listEntryIssues } from "./list-arguments.ts";
import { watchedNamespaceRules, type OperatorRule } from "./rbac-rules.ts";
import type { SettingsIssue } from "./settings.ts";

/**
 * Verbs for a kind charts render: list and watch (the operator's informers cache its own objects of every allowed
 * kind, so a hand edit wakes the instance, and compare and prune read from that cache), get (a live look before
 * an object is created, so a namesake of someone else's is never taken over), create and patch (server-side
 * apply) and delete (prune).
 */
const chartVerbs = ["get", "list", "watch", "create", "patch", "delete"] as const;

/**
 * The rules that let the operator apply, compare and prune chart objects of `kinds`, but for those the built-in
 * template's rules (rbac-rules.ts `watchedNamespaceRules`) already grant, which are granted next to these anyway.
 */
export function chartKindRules(kinds: readonly ChartKind[]): OperatorRule[] {
  const rules: OperatorRule[] = [
    // The chart source: a packed chart in a ConfigMap of the instance's namespace.
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
  ];
  for (const kind of kinds) {
    const group = kind.apiVersion.includes("/") ? kind.apiVersion.slice(0, kind.apiVersion.indexOf("/")) : "";
    const verbs = kind.writeOnly ? ["create", "patch"] : [...chartVerbs];
    if (verbs.every((verb) => builtInGrants(group, kind.plural, verb))) continue;
    rules.push({ apiGroups: [group], resources: [kind.plural], verbs });
  }
  return rules;
}

function builtInGrants(group: string, resource: string, verb: string): boolean {
  return watchedNamespaceRules.some(
    (rule) =>
      rule.resourceNames === undefined &&
      rule.apiGroups.includes(group) &&
      rule.resources.includes(resource) &&
      rule.verbs.includes(verb),
  );
}

/**
 * The allow-list from the component's argument (unset: {@link defaultChartKinds}), or what is wrong with it: the
 * unknown names (field `chartKinds`), and each entry with a comma or listed twice (`chartKinds[i]`), as the
 * operator's `--chart-kinds` refuses them.
 */
export function resolveChartKinds(
  names: readonly string[] | undefined,
): { ok: true; kinds: readonly ChartKind[] } | { ok: false; issues: SettingsIssue[] } {
  if (names === undefined) return { ok: true, kinds: defaultChartKinds };
  // The operator reads a --chart-kinds of no entry ("" or ",") as its default list: an empty one here would mean
  // "none" to whoever wrote it, and grant less than the operator renders. The component writes no flag for the
  // default list, so the two agree: no kinds listed is the default, and here it is said rather than guessed.
  if (names.length === 0) {
    return {
      ok: false,
      issues: [
        {
          field: "chartKinds",
          message: `lists no kind; leave it out for the built-in template's kinds (${defaultChartKinds.map(chartKindName).join(", ")}), or list kinds from ${renderableChartKinds.map(chartKindName).join(", ")}`,
        },
      ],
    };
  }
  const listIssues = listEntryIssues(names, "chartKinds", "--chart-kinds");
  const parsed = parseChartKinds(names.filter((name) => !name.includes(",")));
  if (parsed.ok && listIssues.length === 0) return parsed;
  const unknown = parsed.ok ? [] : parsed.unknown;
  return {
    ok: false,
    issues: [
      ...(unknown.length > 0
        ? [
            {
              field: "chartKinds",
              message: `${unknown.map((name) => `"${name}"`).join(", ")} cannot be rendered by charts; choose from ${renderableChartKinds.map(chartKindName).join(", ")}`,
            },
          ]
        : []),
      ...listIssues,
    ],
  };
}

/** The operator's `--chart-kinds` flag, when the allow-list is not the operator's default one. */
export function chartKindsFlag(kinds: readonly ChartKind[]): string[] {
  const names = kinds.map(chartKindName);
  const defaults = defaultChartKinds.map(chartKindName);
  if (names.length === defaults.length && defaults.every((name) => names.includes(name))) return [];
  return [`--chart-kinds=${names.join(",")}`];
}
