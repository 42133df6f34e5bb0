/**
 * Informer latency: how long after a write the operator's Informer (operator/runtime, used directly here against
 * the local cluster) hands the change to its handlers, measured from the moment the write request is sent:
 * - on an idle watch: K updates of one ConfigMap, spaced out so each lands on a quiet stream;
 * - right after the apiserver closed the watch (minWatchTimeoutSeconds 5, so it closes every 5–10 s): a change
 *   made the moment the informer logs the close, i.e. while it is reconnecting. The informer resumes from its last
 *   resourceVersion, so the change must arrive on the new watch without a relist.
 * Works in a fresh namespace it deletes afterwards.
 *
 * Knobs: BENCH_INFORMER_UPDATES (K, default 40), BENCH_WATCH_RESTARTS (default 6).
 */
import { pino, type Logger } from "pino";
import type { KubeClient, KubeObject } from "../kube/index.ts";
import { Informer } from "../operator/runtime/index.ts";
import type { Benchmark, BenchContext, BenchmarkResult } from "./support/benchmark.ts";
import { createNamespace, deleteNamespace } from "./support/cluster.ts";
import { integerSetting } from "./support/settings.ts";
import { max, quantile, round } from "./support/stats.ts";
import { pause, within } from "./support/wait.ts";

type ConfigMap = KubeObject & { data?: Record<string, string> };

const probeName = "latency-probe";
/** Gap between idle updates: long enough that each write finds the watch quiet. */
const spacingMs = 250;
const watchTimeoutSeconds = 5;

export const informerLatency: Benchmark = {
  name: "informer-latency",
  description: "write → informer handler, on an idle watch and right after the server closed the watch",
  budgetMs: 180_000,
  headline: [
    { metric: "idleP50Ms", header: "informer p50 ms" },
    { metric: "idleP95Ms", header: "informer p95 ms" },
    { metric: "afterCloseMaxMs", header: "after watch close max ms" },
  ],
  run,
};

async function run(context: BenchContext): Promise<BenchmarkResult> {
  const { client, signal, log } = context;
  const updates = integerSetting("BENCH_INFORMER_UPDATES", 40);
  const restarts = integerSetting("BENCH_WATCH_RESTARTS", 6);
  const namespace = await createNamespace(client, "bench-inf");
  log(`namespace ${namespace}`);
  const informers: Informer[] = [];
  try {
    await client.create<ConfigMap>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: probeName, namespace },
      data: { seq: "start" },
    });
    let seq = 0;

    // ---- idle watch ----
    const quiet = pino({ level: "warn" }, pino.destination(2));
    const idle = new Informer<ConfigMap>({ client, apiVersion: "v1", kind: "ConfigMap", namespace, logger: quiet });
    informers.push(idle);
    const idleArrivals = arrivals(idle);
    idle.start();
    await within("the idle informer's first list", idle.waitForSync(signal), { signal, timeoutMs: 30_000 });
    log(`idle watch: ${updates} updates, ${spacingMs} ms apart`);
    const idleSamples: Timing[] = [];
    for (let i = 0; i < updates && !signal.aborted; i++) {
      await pause(spacingMs, signal);
      idleSamples.push(await timedUpdate(client, namespace, String(++seq), idleArrivals, signal));
    }
    await idle.stop();

    // ---- right after a server-closed watch ----
    const { logger, lines } = recordingLogger();
    const closing = new Informer<ConfigMap>({
      client,
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace,
      logger,
      minWatchTimeoutSeconds: watchTimeoutSeconds,
    });
    informers.push(closing);
    const closingArrivals = arrivals(closing);
    closing.start();
    await within("the closing informer's first list", closing.waitForSync(signal), { signal, timeoutMs: 30_000 });
    log(`server-closed watches (every ${watchTimeoutSeconds}–${2 * watchTimeoutSeconds} s): ${restarts} changes`);
    const afterClose: Timing[] = [];
    for (let i = 0; i < restarts && !signal.aborted; i++) {
      await within(`watch close ${i + 1}`, lines.next("watch closed by server, resuming"), {
        signal,
        timeoutMs: 4 * watchTimeoutSeconds * 1000,
      });
      afterClose.push(await timedUpdate(client, namespace, String(++seq), closingArrivals, signal));
    }
    await closing.stop();
    const relists = lines.count("listed") - 1;
    const closes = lines.count("watch closed by server, resuming");

    const seen = (samples: Timing[]) => samples.map((s) => s.seenMs);
    return {
      parameters: { updates, spacingMs, restarts, watchTimeoutSeconds },
      metrics: [
        {
          id: "idleP50Ms",
          label: "write → handler, idle watch, p50",
          value: round(quantile(seen(idleSamples), 0.5), 1),
          unit: "ms",
        },
        {
          id: "idleP95Ms",
          label: "write → handler, idle watch, p95",
          value: round(quantile(seen(idleSamples), 0.95), 1),
          unit: "ms",
        },
        {
          id: "idleMaxMs",
          label: "write → handler, idle watch, max",
          value: round(max(seen(idleSamples)), 1),
          unit: "ms",
        },
        {
          id: "writeRttP50Ms",
          label: "the write's own round trip, p50",
          value: round(
            quantile(
              idleSamples.map((s) => s.writeMs),
              0.5,
            ),
            1,
          ),
          unit: "ms",
        },
        {
          id: "afterCloseP50Ms",
          label: "write → handler, right after a watch close, p50",
          value: round(quantile(seen(afterClose), 0.5), 1),
          unit: "ms",
        },
        {
          id: "afterCloseMaxMs",
          label: "write → handler, right after a watch close, max",
          value: round(max(seen(afterClose)), 1),
          unit: "ms",
        },
        { id: "watchCloses", label: "server-closed watches resumed", value: closes, unit: "count" },
        { id: "relists", label: "relists after those closes", value: relists, unit: "count", expected: 0 },
      ],
      details: { idle: idleSamples.map(rounded), afterClose: afterClose.map(rounded) },
    };
  } finally {
    for (const informer of informers) await informer.stop();
    await deleteNamespace(client, namespace).catch(() => undefined);
  }
}

interface Timing {
  /** Write request sent → the informer's handler had the change. */
  readonly seenMs: number;
  /** Write request sent → its response. */
  readonly writeMs: number;
}

function rounded(timing: Timing): Timing {
  return { seenMs: round(timing.seenMs, 1), writeMs: round(timing.writeMs, 1) };
}

/** When each `seq` value of the probe ConfigMap reached the informer's handlers. */
function arrivals(informer: Informer<ConfigMap>): Map<string, PromiseWithResolvers<number>> {
  const pending = new Map<string, PromiseWithResolvers<number>>();
  const seen = (object: ConfigMap) => {
    if (object.metadata.name !== probeName) return;
    pending.get(object.data?.seq ?? "")?.resolve(performance.now());
  };
  informer.addHandlers({ onAdd: seen, onUpdate: (_old, object) => seen(object) });
  return pending;
}

/** Sets the probe's `seq` and times it until the informer's handler has it. */
async function timedUpdate(
  client: KubeClient,
  namespace: string,
  seq: string,
  pending: Map<string, PromiseWithResolvers<number>>,
  signal: AbortSignal,
): Promise<Timing> {
  const arrival = Promise.withResolvers<number>();
  pending.set(seq, arrival);
  const sentAt = performance.now();
  await client.mergePatch("v1", "ConfigMap", probeName, namespace, { data: { seq } });
  const answeredAt = performance.now();
  const seenAt = await within(`seq ${seq} to reach the informer`, arrival.promise, { signal, timeoutMs: 30_000 });
  pending.delete(seq);
  return { seenMs: seenAt - sentAt, writeMs: answeredAt - sentAt };
}

/**
 * A debug-level logger that keeps each line's `msg` and lets the benchmark wait for the next line with a given
 * message. pino writes synchronously, so the wait resolves at the moment the informer logs (for a close: before
 * it has sent the next watch request).
 */
function recordingLogger(): {
  logger: Logger;
  lines: { next(msg: string): Promise<void>; count(msg: string): number };
} {
  const messages: string[] = [];
  const waiters: { msg: string; resolve: () => void }[] = [];
  const logger = pino(
    { level: "debug" },
    {
      write(line: string) {
        const { msg, level } = JSON.parse(line) as { msg?: string; level?: number };
        messages.push(msg ?? "");
        if ((level ?? 0) >= 40) process.stderr.write(line);
        for (const waiter of waiters.filter((w) => w.msg === msg)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      },
    },
  );
  return {
    logger,
    lines: {
      next: (msg) => new Promise((resolve) => waiters.push({ msg, resolve })),
      count: (msg) => messages.filter((m) => m === msg).length,
    },
  };
}
