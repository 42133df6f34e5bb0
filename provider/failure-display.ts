/**
 * How check failures read in the CLI. For a failure that names a property, the engine prints the program's value
 * of that input with Go's `%v`: fine for a string (`property image value {Nginx Latest} has a problem`), but an
 * object comes out as `{map[configMap:{myapp-chart}]}`, and an input the program did not give (a rule about a
 * default) as `{<nil>}`. Those failures are reported for the whole resource instead, with the input's name at
 * the start of the reason: `resource 'web' has a problem: chart: ConfigMap myapp-chart not found`.
 */
import type { InputFailure } from "./check.ts";
import { isUnknown, type PropertyBag } from "./inputs.ts";

/** `failures` as the CLI shows them readably; failures of scalar inputs the program gave stay as they are. */
export function readableFailures(news: PropertyBag, failures: readonly InputFailure[]): InputFailure[] {
  return failures.map((failure) => {
    if (failure.property === "" || printsReadably(news[failure.property])) return failure;
    return { property: "", reason: `${failure.property}: ${failure.reason}` };
  });
}

/** A value Go's `%v` prints as itself: a known string, number or boolean. */
function printsReadably(value: unknown): boolean {
  if (typeof value === "string") return !isUnknown(value);
  return typeof value === "number" || typeof value === "boolean";
}
