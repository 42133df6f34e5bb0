/**
 * The platform's allow-list of Service types charts may render (`MyAppOperator` arg `chartServiceTypes`, the
 * operator's `--chart-service-types`). ClusterIP keeps an application inside the cluster; every other type
 * reaches out of it (a port on every node, a cloud load balancer, a DNS alias to any name), so each is opt-in.
 */

/** Every Service type Kubernetes knows. */
export const serviceTypes = ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"] as const;

/** One of {@link serviceTypes}. */
export type ChartServiceType = (typeof serviceTypes)[number];

/** ClusterIP only: nothing a chart renders is reachable from outside the cluster unless the platform says so. */
export const defaultChartServiceTypes: readonly ChartServiceType[] = ["ClusterIP"];

/**
 * The types named (ClusterIP always among them, listed or not), or the names that are not Service types.
 */
export function parseChartServiceTypes(
  names: readonly string[],
): { ok: true; types: ChartServiceType[] } | { ok: false; unknown: string[] } {
  const unknown = names.filter((name) => !(serviceTypes as readonly string[]).includes(name));
  if (unknown.length > 0) return { ok: false, unknown };
  return { ok: true, types: serviceTypes.filter((type) => type === "ClusterIP" || names.includes(type)) };
}
