/**
 * The Node flags the operator container runs with (NODE_OPTIONS): its V8 heap settings, from its memory limit,
 * and `--disable-proto=throw` (chart/proto-guard.ts: no tenant key can reach a prototype through `__proto__`);
 * and the C allocator's setting beside them ({@link allocatorEnv}).
 *
 * - Old generation: three quarters of the limit. Node sizes it at a quarter of the memory it may use (a 1Gi limit
 *   gives ~256 MiB), so without the flag the operator would die of "JavaScript heap out of memory" with three
 *   quarters of its container unused. The rest is left to the young generation, code, buffers and native memory.
 * - Young generation: a small semi-space. An operator allocates mostly short-lived objects (parsed watch events,
 *   requests), and V8 lets each semi-space grow to tens of MiB, which is most of the process's resident memory
 *   and none of its live data. Measured at 1,000 instances (bench/RESULTS.md): peak RSS 222 → 128 MiB with
 *   semi-spaces of 1 MiB, for 10 % more CPU.
 */
import { parseQuantity } from "../api/quantity.ts";
import { disableProtoFlag } from "../chart/proto-guard.ts";
import type { ResourceRequirements } from "./manifest-types.ts";

/**
 * glibc's malloc for the operator process: at most two arenas (`MALLOC_ARENA_MAX`). By default every thread
 * that allocates gets an arena of its own, up to eight per core, and keeps in it what it freed: an operator's
 * threads (libuv's pool doing a render's file work, V8's compiler and collector helpers) then hold memory no one
 * uses. Measured converging 100 chart instances (bench/RESULTS.md, "Chart fleets"): peak RSS of the process
 * 119 MiB against 131 (medians), time and CPU alike. Two arenas, not one, keep the main thread off the helpers'
 * lock. Set in the container's env, the image, and the local launcher (tools/lib/operator-launcher.ts), where an
 * explicit `MALLOC_ARENA_MAX` of the caller wins.
 */
export const allocatorEnv: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2" };

/** The share of the container's memory limit given to V8's old generation. */
export const heapShareOfLimit = 0.75;

/** V8's `--max-semi-space-size`, in MiB. */
export const semiSpaceMiB = 1;

const mebibyte = 2n ** 20n;

/**
 * Node's flags for a container with `resources`: the old generation only when there is a memory limit. Of that
 * limit, `reservedMiB` is left to others in the container first: the helm renders the operator may run at once
 * (components/chart-limits.ts), each allowed its own memory limit.
 */
export function nodeOptionsFor(resources: ResourceRequirements, reservedMiB = 0): string[] {
  const flags = [`--max-semi-space-size=${semiSpaceMiB}`, disableProtoFlag];
  const limitMiB = memoryLimitMiB(resources);
  if (limitMiB === undefined) return flags;
  const heapMiB = Math.floor((limitMiB - reservedMiB) * heapShareOfLimit);
  return heapMiB >= 16 ? [`--max-old-space-size=${heapMiB}`, ...flags] : flags;
}

/** The container's memory limit in whole MiB; undefined without one (or with one that is not a positive quantity). */
export function memoryLimitMiB(resources: ResourceRequirements): number | undefined {
  const limit = resources.limits?.["memory"];
  const quantity = typeof limit === "string" ? parseQuantity(limit) : undefined;
  if (!quantity || quantity.nanos <= 0n) return undefined;
  return Number(quantity.nanos / 10n ** 9n / mebibyte);
}
