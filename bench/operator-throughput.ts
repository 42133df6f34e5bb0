/**
 * Operator throughput: the real operator process converges N MyAppInstances (2 replicas each, created at once in a
 * fresh namespace) and the benchmark measures
 * - time from the first create to every instance Ready at its spec, seen through a watch (and per instance);
 * - reconciles, their duration quantiles (controller_runtime_reconcile_time_seconds, as a dashboard would compute
 *   them), and API writes per instance (myapp_operator_api_writes_total; Lease excluded, there is no leader election);
 * - what a converged set costs: writes on an operator restart and during 3 forced resyncs (--resync-period=5);
 *   both are expected to be 0;
 * - the operator's resident memory (VmRSS/VmHWM from /proc), converging and converged;
 * - deletion: the namespace deleted → every instance gone (the operator's finalizer ran).
 * It stops each operator by its pid and deletes the namespace, whatever happens.
 *
 * Knobs: BENCH_INSTANCES (default 50), BENCH_CONCURRENCY (the operator's --concurrency, default 2 as in production).
 */
import { apiVersion, findCondition, kind, type MyAppInstanceStatus } from "../api/index.ts";
import type { KubeClient, KubeObject } from "../kube/index.ts";
import { formatObjectKey } from "../kube/object-key.ts";
import type { Benchmark, BenchContext, BenchmarkResult, Metric } from "./support/benchmark.ts";
import { createNamespace, deleteNamespace, ensureCrd } from "./support/cluster.ts";
import { startOperator, waitForReady, type OperatorProcess } from "./support/operator-process.ts";
import { histogramQuantile, scrape, sum, sumBy, type Sample } from "./support/prometheus.ts";
import { integerSetting } from "./support/settings.ts";
import { max, quantile, round } from "./support/stats.ts";
import { follow } from "./support/watch.ts";
import { waitUntil, within } from "./support/wait.ts";

type Instance = KubeObject & { spec: { replicas?: number; image: string }; status?: MyAppInstanceStatus };

const controller = "myappinstance";
const replicas = 2;
const image = "nginx:1.27";
const resyncs = 3;
const resyncPeriodSeconds = 5;
/** Create requests in flight at once: many instances at once, as a `pulumi up` of a large stack sends them. */
const createParallelism = 10;
const mib = 1024 * 1024;

export const operatorThroughput: Benchmark = {
  name: "operator-throughput",
  description: "N instances created at once → all Ready; reconcile cost; writes when converged; memory",
  budgetMs: 180_000,
  headline: [
    { parameter: "instances", header: "N" },
    { metric: "allReadyS", header: "N→Ready s" },
    { metric: "reconcileP95Ms", header: "reconcile p95 ms" },
    { metric: "writesPerInstance", header: "writes/inst" },
    { metric: "resyncWrites", header: "resync writes" },
    { metric: "peakRssMiB", header: "op peak RSS MiB" },
  ],
  run,
};

async function run(context: BenchContext): Promise<BenchmarkResult> {
  const { client, signal, log } = context;
  const instances = integerSetting("BENCH_INSTANCES", 50);
  const concurrency = integerSetting("BENCH_CONCURRENCY", 2);
  await ensureCrd(client, signal);
  const namespace = await createNamespace(client, "bench-op");
  log(`namespace ${namespace}`);
  const operators: OperatorProcess[] = [];
  try {
    const names = Array.from({ length: instances }, (_, i) => `app-${String(i).padStart(3, "0")}`);
    // As the operator's reconcile lines write them.
    const keys = names.map((name) => formatObjectKey({ namespace, name }));

    // ---- converge ----
    const spawnedAt = performance.now();
    const first = await startOperator({ namespaces: [namespace], args: [`--concurrency=${concurrency}`], signal });
    operators.push(first);
    await waitForReady(first, signal);
    const startupMs = performance.now() - spawnedAt;
    log(`operator pid ${first.pid} ready in ${Math.round(startupMs)} ms; creating ${instances} instances`);

    const converged = await createAndAwaitReady(client, namespace, names, signal);
    log(
      `all ${instances} Ready after ${(converged.allReadyMs / 1000).toFixed(1)} s; waiting for the operator to settle`,
    );
    const convergedSamples = await settle(first, signal);
    const writesByKind = instanceWritesByKind(convergedSamples);
    const convergeWrites = Object.values(writesByKind).reduce((a, b) => a + b, 0);
    const reconciles = sum(convergedSamples, "controller_runtime_reconcile_total");
    const reconcileErrors = sum(convergedSamples, "controller_runtime_reconcile_errors_total");
    const reconcileMs = (q: number) =>
      histogramQuantile(
        convergedSamples,
        "controller_runtime_reconcile_time_seconds",
        q,
        (l) => l.controller === controller,
      ) * 1000;
    const loggedDurations = reconcileLines(first).map((line) => Number(line.durationMs));
    const convergingMemory = first.memory();
    const firstExit = await first.stop();

    // ---- restart and forced resyncs of the converged set ----
    log(`restarting the operator with --resync-period=${resyncPeriodSeconds}; waiting for ${resyncs} resyncs`);
    const second = await startOperator({
      namespaces: [namespace],
      args: [`--concurrency=${concurrency}`, `--resync-period=${resyncPeriodSeconds}`, "--log-level=debug"],
      signal,
    });
    operators.push(second);
    // Not `settle`: with a 5 s resync period the operator is never quiet for long. Counted instead: every key
    // reconciled (so the writes of those reconciles are in the counter) and nothing queued.
    const restartSamples = await waitUntil(
      "every instance reconciled once after the restart",
      async () => {
        if (!keys.every((key) => reconcileLines(second, key).length >= 1)) return undefined;
        const samples = await scrape(second.metricsUrl);
        return sum(samples, "workqueue_depth") === 0 ? samples : undefined;
      },
      { signal, timeoutMs: 60_000 },
    );
    const restartWrites = totalInstanceWrites(restartSamples);
    const mark = second.logs.length;
    const thirdResync = await waitUntil(
      `${resyncs} resyncs`,
      () => nthIndex(second.logs, mark, (line) => line.msg === "resync", resyncs),
      { signal, timeoutMs: (resyncs + 2) * resyncPeriodSeconds * 1000 },
    );
    // Every key reconciled after the third resync's line: the writes of all three resyncs are in the counter.
    await waitUntil(
      `the reconciles of resync ${resyncs}`,
      () => (keys.every((key) => reconcileLines(second, key, thirdResync).length >= 1) ? true : undefined),
      { signal, timeoutMs: 60_000 },
    );
    const resyncWrites = totalInstanceWrites(await scrape(second.metricsUrl)) - restartWrites;
    const resyncReconciles = reconcileLines(second, undefined, mark).length;
    const convergedMemory = second.memory();

    // ---- delete ----
    log("deleting the namespace; waiting until every instance is gone");
    const deleteStartedAt = performance.now();
    await deleteNamespace(client, namespace);
    await waitUntil(
      "every instance to be gone (the operator's finalizer ran)",
      async () => ((await client.list(apiVersion, kind, { namespace })).items.length === 0 ? true : undefined),
      { signal, timeoutMs: 90_000, intervalMs: 100 },
    );
    const deleteAllMs = performance.now() - deleteStartedAt;
    const secondExit = await second.stop();

    const metrics: Metric[] = [
      { id: "operatorStartupMs", label: "operator spawn → /readyz", value: round(startupMs, 0), unit: "ms" },
      {
        id: "createAllMs",
        label: `${instances} creates sent and answered`,
        value: round(converged.createAllMs, 0),
        unit: "ms",
      },
      {
        id: "allReadyS",
        label: `first create → all ${instances} Ready`,
        value: round(converged.allReadyMs / 1000, 2),
        unit: "s",
      },
      {
        id: "throughput",
        label: "instances Ready per second",
        value: round((instances * 1000) / converged.allReadyMs, 2),
        unit: "1/s",
      },
      {
        id: "instanceReadyP50Ms",
        label: "create → Ready, per instance, p50",
        value: round(quantile(converged.perInstanceMs, 0.5), 0),
        unit: "ms",
      },
      {
        id: "instanceReadyP95Ms",
        label: "create → Ready, per instance, p95",
        value: round(quantile(converged.perInstanceMs, 0.95), 0),
        unit: "ms",
      },
      { id: "reconciles", label: "reconciles to converge", value: reconciles, unit: "count" },
      {
        id: "reconcilesPerInstance",
        label: "reconciles per instance",
        value: round(reconciles / instances, 2),
        unit: "count",
      },
      { id: "reconcileErrors", label: "reconcile errors while converging", value: reconcileErrors, unit: "count" },
      {
        id: "reconcileP50Ms",
        label: "reconcile duration p50 (histogram)",
        value: round(reconcileMs(0.5), 1),
        unit: "ms",
      },
      {
        id: "reconcileP95Ms",
        label: "reconcile duration p95 (histogram)",
        value: round(reconcileMs(0.95), 1),
        unit: "ms",
      },
      {
        id: "reconcileP99Ms",
        label: "reconcile duration p99 (histogram)",
        value: round(reconcileMs(0.99), 1),
        unit: "ms",
      },
      {
        id: "reconcileMaxMs",
        label: "reconcile duration max (logs)",
        value: round(max(loggedDurations), 1),
        unit: "ms",
      },
      {
        id: "writesPerInstance",
        label: "API writes per instance to converge",
        value: round(convergeWrites / instances, 2),
        unit: "writes",
      },
      {
        id: "restartWrites",
        label: "writes on an operator restart (converged)",
        value: restartWrites,
        unit: "writes",
        expected: 0,
      },
      {
        id: "resyncWrites",
        label: `writes during ${resyncs} forced resyncs`,
        value: resyncWrites,
        unit: "writes",
        expected: 0,
      },
      {
        id: "resyncReconciles",
        label: `reconciles during ${resyncs} forced resyncs`,
        value: resyncReconciles,
        unit: "count",
      },
      {
        id: "peakRssMiB",
        label: `operator peak RSS (converging ${instances})`,
        value: round((convergingMemory?.peakRss ?? NaN) / mib, 1),
        unit: "MiB",
      },
      {
        id: "convergedRssMiB",
        label: `operator RSS, ${instances} converged, after resyncs`,
        value: round((convergedMemory?.rss ?? NaN) / mib, 1),
        unit: "MiB",
      },
      {
        id: "deleteAllMs",
        label: `namespace deleted → all ${instances} instances gone`,
        value: round(deleteAllMs, 0),
        unit: "ms",
      },
    ];
    return {
      parameters: { instances, replicas, concurrency, resyncs, resyncPeriodSeconds, createParallelism },
      metrics,
      details: {
        writesByKindToConverge: writesByKind,
        writesByVerbToConverge: sumBy(
          convergedSamples.filter((s) => s.labels.kind !== "Lease"),
          "myapp_operator_api_writes_total",
          "verb",
        ),
        operatorExits: [firstExit, secondExit],
      },
    };
  } finally {
    await cleanUp(client, namespace, operators);
    // The namespace's pods and volumes go in the background; the next benchmark should find a quiet cluster.
    if (!signal.aborted) {
      const gone = await waitUntil(
        `namespace ${namespace} to be gone`,
        async () => ((await client.find("v1", "Namespace", namespace)) ? undefined : true),
        { signal, timeoutMs: 90_000, intervalMs: 500 },
      ).catch((error: unknown) => log(`cleanup: ${error instanceof Error ? error.message : String(error)}`));
      if (gone) log(`namespace ${namespace} gone`);
    }
  }
}

/**
 * Creates the instances (createParallelism at a time) and resolves when a watch, started before the first create,
 * has seen each of them Ready at its spec.
 */
async function createAndAwaitReady(
  client: KubeClient,
  namespace: string,
  names: readonly string[],
  signal: AbortSignal,
) {
  const createdAt = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const allReady = Promise.withResolvers<void>();
  const stopWatching = new AbortController();
  const { metadata } = await client.list(apiVersion, kind, { namespace });
  const watching = follow<Instance>(
    client,
    apiVersion,
    kind,
    {
      namespace,
      resourceVersion: metadata.resourceVersion ?? "0",
      signal: AbortSignal.any([signal, stopWatching.signal]),
    },
    ({ object }) => {
      const name = object.metadata.name ?? "";
      if (readyAt.has(name) || !isReadyAtSpec(object)) return;
      readyAt.set(name, performance.now());
      if (readyAt.size === names.length) allReady.resolve();
    },
  );
  watching.catch((error: unknown) => allReady.reject(new Error("the watch of the instances failed", { cause: error })));
  try {
    const startedAt = performance.now();
    const queue = [...names];
    await Promise.all(
      Array.from({ length: createParallelism }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
          createdAt.set(name, performance.now());
          await client.create({ apiVersion, kind, metadata: { name, namespace }, spec: { replicas, image } });
        }
      }),
    );
    const createAllMs = performance.now() - startedAt;
    await within(`all ${names.length} instances to be Ready`, allReady.promise, { signal, timeoutMs: 150_000 });
    const perInstanceMs = names.map((name) => readyAt.get(name)! - createdAt.get(name)!);
    return { createAllMs, allReadyMs: Math.max(...readyAt.values()) - startedAt, perInstanceMs };
  } finally {
    stopWatching.abort();
    await watching.catch(() => undefined);
  }
}

/** Ready=True for the current generation, every replica ready, and the spec's image rolled out. */
function isReadyAtSpec(instance: Instance): boolean {
  const ready = findCondition(instance.status?.conditions, "Ready");
  return (
    ready?.status === "True" &&
    instance.status?.observedGeneration === instance.metadata.generation &&
    instance.status?.readyReplicas === (instance.spec.replicas ?? 1) &&
    instance.status?.image === instance.spec.image
  );
}

/**
 * Waits until the operator is idle: an empty work queue and no reconcile or write for 3 s (a rollout's tail, the
 * last status writes). Returns the samples of the last scrape.
 */
async function settle(operator: OperatorProcess, signal: AbortSignal): Promise<Sample[]> {
  let last: { fingerprint: string; since: number } | undefined;
  return waitUntil(
    "the operator to settle (empty queue, no reconcile or write for 3 s)",
    async () => {
      const samples = await scrape(operator.metricsUrl);
      const depth = sum(samples, "workqueue_depth");
      const fingerprint = `${sum(samples, "controller_runtime_reconcile_total")}/${totalInstanceWrites(samples)}/${depth}`;
      const now = performance.now();
      if (!last || last.fingerprint !== fingerprint) last = { fingerprint, since: now };
      return depth === 0 && now - last.since >= 3000 ? samples : undefined;
    },
    { signal, timeoutMs: 60_000, intervalMs: 250 },
  );
}

/** myapp_operator_api_writes_total by kind, without Lease (the cost of leader election, not of instances). */
function instanceWritesByKind(samples: readonly Sample[]): Record<string, number> {
  const byKind = sumBy(samples, "myapp_operator_api_writes_total", "kind");
  delete byKind.Lease;
  return byKind;
}

function totalInstanceWrites(samples: readonly Sample[]): number {
  return sum(samples, "myapp_operator_api_writes_total", (labels) => labels.kind !== "Lease");
}

/** The operator's "reconciled" lines (of `key`, if given) from index `from` on. */
function reconcileLines(operator: OperatorProcess, key?: string, from = 0) {
  return operator.logs
    .slice(from)
    .filter((line) => line.msg === "reconciled" && (key === undefined || line.key === key));
}

/** The index of the `n`th line from `from` on that passes `predicate`. */
function nthIndex<T>(
  items: readonly T[],
  from: number,
  predicate: (item: T) => boolean,
  n: number,
): number | undefined {
  let seen = 0;
  for (let i = from; i < items.length; i++) {
    if (predicate(items[i]!) && ++seen === n) return i;
  }
  return undefined;
}

/**
 * Stops every operator this run started (by pid), then makes sure the namespace can go: finalizers of instances
 * left behind (the operator is gone) are removed, and the namespace's deletion is requested.
 */
async function cleanUp(client: KubeClient, namespace: string, operators: readonly OperatorProcess[]): Promise<void> {
  for (const operator of operators) await operator.stop();
  const left = await client.list(apiVersion, kind, { namespace }).catch(() => ({ items: [] as KubeObject[] }));
  for (const item of left.items) {
    if (!item.metadata.finalizers?.length) continue;
    await client
      .mergePatch(apiVersion, kind, item.metadata.name ?? "", namespace, { metadata: { finalizers: null } })
      .catch(() => undefined);
  }
  await deleteNamespace(client, namespace).catch(() => undefined);
}
