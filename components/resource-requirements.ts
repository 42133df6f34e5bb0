/**
 * The operator container's `resources`, checked as the apiserver will check them at `pulumi up`, so a typo fails
 * the preview naming the field instead of a half-applied `up` (`limit: {...}`, `memory: "lots"`), and so the
 * render memory check (chart-limits.ts) always has a limit it can read when one is given.
 */
import { maxQuantityLength, parseQuantity } from "../api/quantity.ts";
import type { ResourceRequirements } from "./manifest-types.ts";

/** What the operator's container may ask for: what the node accounts. */
const resourceNames = ["cpu", "memory", "ephemeral-storage"] as const;

/** Each problem of `resources` as [field, message]. */
export function resourceRequirementsProblems(resources: ResourceRequirements): [field: string, message: string][] {
  const problems: [string, string][] = [];
  const lists = resources as Record<string, unknown>;
  for (const key of Object.keys(lists)) {
    if (key !== "requests" && key !== "limits") {
      problems.push([`resources.${key}`, "is not an argument; the arguments of resources are requests, limits"]);
    }
  }
  const parsed: Record<"requests" | "limits", Map<string, bigint>> = { requests: new Map(), limits: new Map() };
  for (const list of ["requests", "limits"] as const) {
    const given = lists[list];
    if (given === undefined) continue;
    if (typeof given !== "object" || given === null || Array.isArray(given)) {
      problems.push([`resources.${list}`, `must be an object of ${resourceNames.join(", ")}`]);
      continue;
    }
    for (const [name, value] of Object.entries(given)) {
      const field = `resources.${list}.${name}`;
      if (!(resourceNames as readonly string[]).includes(name)) {
        problems.push([field, `is not a resource the operator's container may set; use ${resourceNames.join(", ")}`]);
        continue;
      }
      const quantity =
        typeof value === "string" && value.length <= maxQuantityLength ? parseQuantity(value) : undefined;
      if (!quantity || quantity.nanos <= 0n) {
        problems.push([
          field,
          `${JSON.stringify(value)} must be a positive quantity string, such as "500m" or "512Mi"`,
        ]);
        continue;
      }
      parsed[list].set(name, quantity.nanos);
    }
  }
  for (const [name, request] of parsed.requests) {
    const limit = parsed.limits.get(name);
    if (limit !== undefined && request > limit) {
      problems.push([`resources.requests.${name}`, `must not exceed resources.limits.${name}`]);
    }
  }
  return problems;
}
