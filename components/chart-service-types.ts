/**
 * The platform admin's allow-list of Service types charts may render (`MyAppOperator` arg `chartServiceTypes`):
 * ClusterIP always; NodePort, LoadBalancer and ExternalName only when listed, since each reaches out of the
 * cluster. The operator refuses any other type in a render (ChartServiceTypeNotAllowed).
 */
import { defaultChartServiceTypes, parseChartServiceTypes, serviceTypes, type ChartServiceType } from "../api/index.ts";

/** The allow-list from the component's argument, or what is wrong with it. */
export function resolveChartServiceTypes(
  names: readonly string[] | undefined,
): { ok: true; types: readonly ChartServiceType[] } | { ok: false; message: string } {
  if (names === undefined) return { ok: true, types: defaultChartServiceTypes };
  const parsed = parseChartServiceTypes(names);
  if (parsed.ok) return parsed;
  return {
    ok: false,
    message: `${parsed.unknown.map((name) => `"${name}"`).join(", ")} are not Service types; choose from ${serviceTypes.join(", ")}`,
  };
}

/** The operator's `--chart-service-types` flag, when the allow-list is not the default (ClusterIP only). */
export function chartServiceTypesFlag(types: readonly ChartServiceType[]): string[] {
  if (types.every((type) => defaultChartServiceTypes.includes(type))) return [];
  return [`--chart-service-types=${types.join(",")}`];
}
