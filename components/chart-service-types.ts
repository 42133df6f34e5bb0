/**
 * The platform admin's allow-list of Service types charts may render (`MyAppOperator` arg `chartServiceTypes`):
 * ClusterIP always; NodePort, LoadBalancer and ExternalName only when listed, since each reaches out of the
 * cluster. The operator refuses any other type in a render (ChartServiceTypeNotAllowed).
 */
import { defaultChartServiceTypes, parseChartServiceTypes, serviceTypes, type ChartServiceType } from "../api/index.ts";
import { listEntryIssues } from "./list-arguments.ts";
import type { SettingsIssue } from "./settings.ts";

/**
 * The allow-list from the component's argument, or what is wrong with it: the unknown names (field
 * `chartServiceTypes`), and each entry with a comma or listed twice (`chartServiceTypes[i]`), as the operator's
 * `--chart-service-types` refuses them.
 */
export function resolveChartServiceTypes(
  names: readonly string[] | undefined,
): { ok: true; types: readonly ChartServiceType[] } | { ok: false; issues: SettingsIssue[] } {
  if (names === undefined) return { ok: true, types: defaultChartServiceTypes };
  const listIssues = listEntryIssues(names, "chartServiceTypes", "--chart-service-types");
  const parsed = parseChartServiceTypes(names.filter((name) => !name.includes(",")));
  if (parsed.ok && listIssues.length === 0) return parsed;
  const unknown = parsed.ok ? [] : parsed.unknown;
  return {
    ok: false,
    issues: [
      ...(unknown.length > 0
        ? [
            {
              field: "chartServiceTypes",
              message: `${unknown.map((name) => `"${name}"`).join(", ")} are not Service types; choose from ${serviceTypes.join(", ")}`,
            },
          ]
        : []),
      ...listIssues,
    ],
  };
}

/** The operator's `--chart-service-types` flag, when the allow-list is not the default (ClusterIP only). */
export function chartServiceTypesFlag(types: readonly ChartServiceType[]): string[] {
  if (types.every((type) => defaultChartServiceTypes.includes(type))) return [];
  return [`--chart-service-types=${types.join(",")}`];
}
