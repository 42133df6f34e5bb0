/**
 * The V8 heap size the operator container runs with. Node sizes its old generation at a quarter of the memory it
 * may use (a 1Gi limit gives ~256 MiB), so without a flag the operator would die of "JavaScript heap out of
 * memory" with three quarters of its container unused. The flag gives the heap three quarters of the limit and
 * leaves the rest to the young generation, code, buffers and native memory.
 */
import { parseQuantity } from "../api/quantity.ts";
import type { ResourceRequirements } from "./manifest-types.ts";

/** The share of the container's memory limit given to V8's old generation. */
export const heapShareOfLimit = 0.75;

const mebibyte = 2n ** 20n;

/** `--max-old-space-size=<MiB>` for a memory limit, or undefined without one (Node then sizes from the node). */
export function heapFlagFor(resources: ResourceRequirements): string | undefined {
  const limit = resources.limits?.["memory"];
  const quantity = typeof limit === "string" ? parseQuantity(limit) : undefined;
  if (!quantity || quantity.nanos <= 0n) return undefined;
  const limitMiB = Number(quantity.nanos / 10n ** 9n / mebibyte);
  const heapMiB = Math.floor(limitMiB * heapShareOfLimit);
  return heapMiB >= 16 ? `--max-old-space-size=${heapMiB}` : undefined;
}
