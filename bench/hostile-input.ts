/**
 * Hostile input: what the inputs a tenant controls cost the operator's event loop at their worst, the figures the
 * unit tests check only for correctness (each test names this benchmark):
 * - the image-reference regexp on inputs built to make a backtracking engine try every split (66 of 255 chars);
 * - the work queue: 50,000 keys of one namespace waiting at low priority, each promoted by a change, then drained
 *   (a rollout after a restart; quadratic with arrays, which took 10 s of the shared event loop);
 * - a chart repository's 10 MiB index.yaml: the lookup of one chart, and the longest the event loop waited
 *   meanwhile (parsed whole it holds the loop ~4 s);
 * - `helm template` output whose template path is a million blanks (tar allows any length), split into objects;
 * - a converged chart render of 500 objects applied among 40,000 identities a tenant labelled as the instance's
 *   chart's (the cache keeps them, as identities): each rendered object looked up among them (scanned, it took
 *   seconds of the event loop; a reconcile's lookups are by name now).
 * Pure computation in this process: the cluster is not used. Each figure is the median of 5 runs.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { imageReferenceRegExp, maxImageReferenceLength } from "../api/index.ts";
import { defaultChartKinds } from "../api/index.ts";
import { splitFullRender } from "../chart/helm.ts";
import { applyRender, type ChartSession, type PreparedRender } from "../operator/chart/index.ts";
import { findIndexEntry } from "../chart/repository-index.ts";
import { realClock, WorkQueue } from "../operator/runtime/index.ts";
import { largeHelmIndex } from "./support/helm-index.ts";
import type { Benchmark, BenchContext, BenchmarkResult } from "./support/benchmark.ts";
import { max, quantile, round } from "./support/stats.ts";

const runs = 5;
const promotedKeys = 50_000;
const renderedObjects = 500;
const forgedIdentities = 40_000;

export const hostileInput: Benchmark = {
  name: "hostile-input",
  description: "worst-case tenant input on the event loop: image regexp, 50,000 promotions, 10 MiB index, long paths",
  budgetMs: 300_000,
  headline: [],
  run,
};

async function run(context: BenchContext): Promise<BenchmarkResult> {
  const regexp = await medianOf(context, "image regexp, slowest adversarial input", async () => slowestRegexpMs());
  const queue = await medianOf(context, "50,000 promotions and the drain", promoteAndDrainMs);
  const index = await medianOf(context, "10 MiB index lookup", indexLookup);
  const split = await medianOf(context, "render with a 1,000,000-blank path, split", splitLongPathMs);
  const forged = await medianOf(context, "a converged render among forged identities", applyAmongForgedMs);
  return {
    parameters: { runs, promotedKeys, indexMiB: round(largeHelmIndex.length / 2 ** 20) },
    metrics: [
      {
        id: "imageRegexpWorstMs",
        label: "image regexp, slowest of 66 adversarial inputs",
        value: regexp.ms,
        unit: "ms",
      },
      { id: "promoteDrainMs", label: `${promotedKeys} low keys promoted, then drained`, value: queue.ms, unit: "ms" },
      { id: "indexLookupMs", label: "chart lookup in a 10 MiB index.yaml", value: index.ms, unit: "ms" },
      {
        id: "indexWorstLoopDelayMs",
        label: "longest event-loop wait during it",
        value: index.worstDelayMs,
        unit: "ms",
      },
      {
        id: "longPathSplitMs",
        label: "render with a 1,000,000-blank template path, split",
        value: split.ms,
        unit: "ms",
      },
      {
        id: "applyAmongForgedMs",
        label: `a converged render of ${renderedObjects} objects applied among ${forgedIdentities} forged identities`,
        value: forged.ms,
        unit: "ms",
      },
    ],
  };
}

/** Runs `measure` `runs` times and keeps the median of each figure. */
async function medianOf<T extends Record<string, number>>(
  context: BenchContext,
  what: string,
  measure: () => Promise<T>,
): Promise<T> {
  const samples: T[] = [];
  for (let i = 0; i < runs && !context.signal.aborted; i++) samples.push(await measure());
  if (samples.length === 0) throw new Error(`${what}: stopped before the first run`);
  const figures = Object.keys(samples[0]!).map((key) => [
    key,
    round(
      quantile(
        samples.map((s) => s[key]!),
        0.5,
      ),
      2,
    ),
  ]);
  context.log(`${what}: ${figures.map(([key, value]) => `${key} ${value}`).join(", ")}`);
  return Object.fromEntries(figures) as T;
}

function slowestRegexpMs(): { ms: number } {
  const units = ["a", "a-", "a.", "a__", "a-b.", "a/", "A-", "a.a-", "a:", "a/b.", "a0-a0."];
  const times: number[] = [];
  for (const unit of units) {
    for (const last of ["!", ":", "@", "/", "-", "."]) {
      const input = unit.repeat(maxImageReferenceLength).slice(0, maxImageReferenceLength - 1) + last;
      const started = performance.now();
      imageReferenceRegExp.test(input);
      times.push(performance.now() - started);
    }
  }
  return { ms: max(times) };
}

async function promoteAndDrainMs(): Promise<{ ms: number }> {
  const queue = new WorkQueue({ clock: realClock });
  for (let i = 0; i < promotedKeys; i++) queue.add(`tenant/i-${i}`, "low");
  const started = performance.now();
  for (let i = promotedKeys - 1; i >= 0; i--) queue.add(`tenant/i-${i}`);
  for (let i = 0; i < promotedKeys; i++) queue.done((await queue.get())!);
  const ms = performance.now() - started;
  queue.shutDown();
  return { ms };
}

async function indexLookup(): Promise<{ ms: number; worstDelayMs: number }> {
  // Node's own event-loop delay histogram (a 1 ms timer): its max is the longest the loop was held past it
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  try {
    const started = performance.now();
    const listing = await findIndexEntry(largeHelmIndex, "chart150", "1.59.0");
    const ms = performance.now() - started;
    if (listing?.entry?.version !== "1.59.0") throw new Error("the index lookup did not find chart150 1.59.0");
    await sleep(5); // the timer samples the last stretch once the loop is free
    return { ms, worstDelayMs: delay.max / 1e6 };
  } finally {
    delay.disable();
  }
}

async function splitLongPathMs(): Promise<{ ms: number }> {
  const padded = `app/templates/a${" ".repeat(1_000_000)}b.yaml`;
  const stream =
    `---\n# Source: ${padded}  \nkind: ConfigMap\nmetadata:\n  name: x\n` +
    `---\n# Source: app/templates/h.yaml\nkind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n`;
  const started = performance.now();
  await splitFullRender(stream);
  return { ms: performance.now() - started };
}

async function applyAmongForgedMs(): Promise<{ ms: number }> {
  const long = "a".repeat(230);
  const configMap = (name: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "tenant" },
    data: { key: "value" },
  });
  const objects = Array.from({ length: renderedObjects }, (_, i) => configMap(`web-${long}-d${i}`));
  const forged = Array.from({ length: forgedIdentities }, (_, i) => ({
    ...configMap(`web-${long}-f${i}`),
    data: undefined,
    contentWithheld: true,
  }));
  const session = {
    key: { namespace: "tenant", name: "web" },
    instance: { metadata: { uid: "u" } },
    cluster: {
      apply: () => Promise.reject(new Error("a converged render applies nothing")),
    },
    changed: () => {},
  } as unknown as ChartSession;
  const render = {
    objects,
    live: [...forged, ...objects],
    allowed: defaultChartKinds,
    uid: "u",
  } as unknown as PreparedRender;
  const started = performance.now();
  const result = await applyRender(session, render, undefined);
  const ms = performance.now() - started;
  if (!result.ok || result.applied.length !== renderedObjects) throw new Error("the converged render did not apply");
  return { ms };
}
