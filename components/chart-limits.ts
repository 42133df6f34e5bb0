/**
 * How helm is bounded inside the operator's container (`MyAppOperator` args `maxConcurrentRenders`,
 * `renderLimits`, `chartSources`), passed to the operator as `--max-concurrent-renders`, `--render-*` and
 * `--chart-sources`, and what they cost the container: K renders of up to `renderLimits.memoryMiB` each, and the
 * thread that parses their large documents, share the operator's memory limit with Node (components/node-heap.ts
 * takes them off the heap), and each render needs scratch
 * space for its chart in /tmp.
 */
import {
  defaultMaxConcurrentRenders,
  maxConcurrentRendersLimit,
  defaultRenderLimits,
  maxRenderTimeoutSeconds,
  minRenderMemoryMiB,
  type RenderLimits,
} from "../chart/render-limits.ts";
import { parseThreadHeapMiB } from "../chart/render-yaml-thread.ts";
import { chartSourceProblems, normalizePrefix } from "../chart/source-policy.ts";
import { listEntryIssues } from "./list-arguments.ts";
import type { ResourceRequirements } from "./manifest-types.ts";
import { memoryLimitMiB } from "./node-heap.ts";
import { defaultFetchCaps } from "../chart/sources.ts";

/** The resolved chart limits of the platform. */
export interface ChartLimitSettings {
  readonly maxConcurrentRenders: number;
  readonly renderLimits: RenderLimits;
  readonly chartSources: readonly string[];
}

export interface ChartLimitArgs {
  readonly maxConcurrentRenders?: number;
  readonly renderLimits?: Partial<RenderLimits>;
  readonly chartSources?: readonly string[];
}

/** The chart limits with defaults, or the problems (field, message). */
export function resolveChartLimits(
  args: ChartLimitArgs,
): { ok: true; settings: ChartLimitSettings } | { ok: false; problems: { field: string; message: string }[] } {
  const problems: { field: string; message: string }[] = [];
  const maxConcurrentRenders = args.maxConcurrentRenders ?? defaultMaxConcurrentRenders;
  if (
    !Number.isInteger(maxConcurrentRenders) ||
    maxConcurrentRenders < 1 ||
    maxConcurrentRenders > maxConcurrentRendersLimit
  ) {
    problems.push({
      field: "maxConcurrentRenders",
      message: `${maxConcurrentRenders} must be a whole number from 1 to ${maxConcurrentRendersLimit}`,
    });
  }
  // An undefined limit takes its default, as an absent one does (a stack's `config.getNumber(...)`).
  const given = Object.entries(args.renderLimits ?? {}).filter(([, value]) => value !== undefined);
  const renderLimits: RenderLimits = { ...defaultRenderLimits, ...Object.fromEntries(given) };
  for (const [key, value] of Object.entries(renderLimits)) {
    // A render's wall time is a timer in the operator (chart/guest-process.ts), which refuses a longer one.
    const max = key === "timeoutSeconds" ? maxRenderTimeoutSeconds : Number.MAX_SAFE_INTEGER;
    if (!Number.isInteger(value) || value < 1 || value > max) {
      problems.push({
        field: `renderLimits.${key}`,
        message: `${String(value)} must be a whole number from 1 to ${max}`,
      });
    }
  }
  if (renderLimits.memoryMiB < minRenderMemoryMiB) {
    problems.push({
      field: "renderLimits.memoryMiB",
      message: `${renderLimits.memoryMiB} must be at least ${minRenderMemoryMiB} (helm's Go runtime needs ~64 MiB to start)`,
    });
  }
  const chartSources = [...(args.chartSources ?? [])];
  // A comma would split an entry of --chart-sources in two; one prefix twice (`oci://r/a`, `oci://R/a/`) is a repeat.
  const listIssues = listEntryIssues(chartSources, "chartSources", "--chart-sources", normalizePrefix);
  problems.push(...listIssues);
  const listed = new Set(listIssues.map((issue) => issue.field));
  const unlisted = chartSources.filter((_, i) => !listed.has(`chartSources[${i}]`));
  for (const message of chartSourceProblems(unlisted)) problems.push({ field: "chartSources", message });
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, settings: { maxConcurrentRenders, renderLimits, chartSources } };
}

/** The operator flags for `settings`: only what differs from the operator's own defaults. */
export function chartLimitFlags(settings: ChartLimitSettings): string[] {
  const flags: string[] = [];
  if (settings.maxConcurrentRenders !== defaultMaxConcurrentRenders) {
    flags.push(`--max-concurrent-renders=${settings.maxConcurrentRenders}`);
  }
  const { renderLimits: limits } = settings;
  if (limits.memoryMiB !== defaultRenderLimits.memoryMiB) flags.push(`--render-memory=${limits.memoryMiB}`);
  if (limits.cpuSeconds !== defaultRenderLimits.cpuSeconds) flags.push(`--render-cpu=${limits.cpuSeconds}`);
  if (limits.timeoutSeconds !== defaultRenderLimits.timeoutSeconds) {
    flags.push(`--render-timeout=${limits.timeoutSeconds}`);
  }
  if (limits.outputMiB !== defaultRenderLimits.outputMiB) flags.push(`--render-output=${limits.outputMiB}`);
  if (limits.objects !== defaultRenderLimits.objects) flags.push(`--render-objects=${limits.objects}`);
  if (limits.valuesKiB !== defaultRenderLimits.valuesKiB) flags.push(`--render-values=${limits.valuesKiB}`);
  if (settings.chartSources.length > 0) flags.push(`--chart-sources=${settings.chartSources.join(",")}`);
  return flags;
}

/**
 * Memory the renders may take at once, in MiB: K helm processes and the heap of the thread that parses their large
 * documents (chart/render-yaml-thread.ts). Taken off what Node's heap is sized from.
 */
export function rendersMemoryMiB(settings: ChartLimitSettings): number {
  return settings.maxConcurrentRenders * settings.renderLimits.memoryMiB + parseThreadHeapMiB;
}

/**
 * The /tmp emptyDir's size: each render writes the packed chart (at most the fetch cap; a ConfigMap's is
 * smaller) and its values there, and helm's HOME; 64 MiB for Node and the rest, as before.
 */
export function scratchMiB(settings: ChartLimitSettings): number {
  const chartMiB = Math.ceil(defaultFetchCaps.chartBytes / (1024 * 1024));
  // The chart, and as much again for values and helm's cache and config directories.
  return 64 + settings.maxConcurrentRenders * 2 * chartMiB;
}

/** Node needs at least this much of the container besides the renders. */
const minNodeMiB = 256;

/**
 * What is wrong when the memory limit leaves Node too little beside K renders, if anything. `reviewsMiB`: the heap
 * of the webhooks' thread that parses large reviews, when the webhooks are on (components/deployment.ts).
 */
export function renderMemoryProblem(
  resources: ResourceRequirements,
  settings: ChartLimitSettings,
  reviewsMiB = 0,
): string | undefined {
  const limit = resources.limits?.["memory"];
  const limitMiB = memoryLimitMiB(resources);
  if (limitMiB === undefined) return undefined;
  const reserved = rendersMemoryMiB(settings) + reviewsMiB;
  if (limitMiB - reserved >= minNodeMiB) return undefined;
  return (
    `${String(limit)} leaves Node less than ${minNodeMiB} MiB beside ${settings.maxConcurrentRenders} helm renders of ` +
    `${settings.renderLimits.memoryMiB} MiB and the ${parseThreadHeapMiB} MiB of the thread that parses their ` +
    `output${reviewsMiB > 0 ? ` (and the ${reviewsMiB} MiB of the webhooks' thread that parses large reviews)` : ""}; ` +
    `raise the limit to at least ${reserved + minNodeMiB}Mi, or lower maxConcurrentRenders or renderLimits.memoryMiB`
  );
}
