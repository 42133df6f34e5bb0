import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConflictError, ServerError } from "../../../kube/errors.ts";
import { sleep } from "../../../kube/clock.ts";
import {
  Controller,
  type ControllerOptions,
  type ReconcileContext,
  type ReconcileResult,
} from "../../../operator/runtime/controller.ts";
import { PermanentError, TransientError } from "../../../operator/runtime/errors.ts";
import { OperatorMetrics } from "../../../operator/runtime/metrics.ts";
import { formatObjectKey, parseObjectKey, type ObjectKey } from "../../../kube/object-key.ts";
import { captureLogger } from "./capture-logger.ts";
import { FakeClock, settle } from "./fake-clock.ts";

/** The ObjectKey written `text` ("namespace/name"). */
const objectKey = (text: string): ObjectKey => parseObjectKey(text);

/**
 * A controller on a fake clock whose reconcile is scripted per test; records every call. The script and the
 * records see each key as its text, "namespace/name".
 */
function setup(
  reconcile: (key: string, attempt: number, context: ReconcileContext) => Promise<ReconcileResult>,
  options: Partial<ControllerOptions> = {},
) {
  const clock = new FakeClock();
  const { logger, lines } = captureLogger();
  const metrics = new OperatorMetrics();
  const calls: { key: string; at: number }[] = [];
  const stalled: { key: string; error: unknown; failures: number }[] = [];
  const start = clock.monotonicMs();
  const controller = new Controller({
    name: "myappinstance",
    clock,
    logger,
    metrics,
    reconcile: (requested, context) => {
      const key = formatObjectKey(requested);
      calls.push({ key, at: clock.monotonicMs() - start });
      return reconcile(key, calls.filter((c) => c.key === key).length, context);
    },
    onStalled: async (key, error, failures) => void stalled.push({ key: formatObjectKey(key), error, failures }),
    ...options,
  });
  return { clock, controller, calls, stalled, metrics, lines };
}

async function counter(metrics: OperatorMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  assert.ok(metric, `metric ${name} is registered`);
  const value = (metric.values as { labels: Record<string, string | number>; value: number }[]).find((v) =>
    Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  );
  return value?.value ?? 0;
}

/** A promise with its resolve exposed, to hold a reconcile in flight. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("Controller", () => {
  it("reconciles an enqueued key once, logs one line with key, duration, result and writes, and counts it", async () => {
    const { clock, controller, calls, lines, metrics } = setup(async (_key, _attempt, { writes }) => {
      writes.count += 1; // apply Deployment
      await sleep(clock, 40);
      writes.count += 1; // apply Service
      return {};
    });
    controller.enqueue(objectKey("ns/a"));
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(1000);
    assert.deepEqual(calls, [{ key: "ns/a", at: 0 }]);
    const line = lines.find((l) => l.msg === "reconciled");
    assert.ok(line);
    assert.equal(line.controller, "myappinstance");
    assert.equal(line.key, "ns/a");
    assert.equal(line.result, "success");
    assert.equal(line.writes, 2);
    assert.equal(line.durationMs, 40);
    assert.equal(await counter(metrics, "controller_runtime_reconcile_total", { result: "success" }), 1);
    assert.equal(await counter(metrics, "controller_runtime_reconcile_total", { result: "error" }), 0);
  });

  it("puts what the writes changed on the reconcile's one line, and nothing when there was none", async () => {
    let first = true;
    const { clock, controller, lines } = setup(async (_key, _attempt, { writes }) => {
      if (first) {
        writes.count += 2;
        writes.changes?.push("Deployment/a created", "status Progressing");
      }
      first = false;
      return {};
    });
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(1000);
    controller.enqueue(objectKey("ns/a"));
    await clock.advance(1000);
    const reconciled = lines.filter((l) => l.msg === "reconciled");
    assert.equal(reconciled.length, 2);
    assert.deepEqual(reconciled[0]?.changes, ["Deployment/a created", "status Progressing"]);
    assert.equal(reconciled[1]?.writes, 0);
    assert.equal("changes" in (reconciled[1] ?? {}), false, "a reconcile that wrote nothing lists no changes");
  });

  it("hands the reconciler and the stalled handler the key as an ObjectKey, cluster-scoped ones included", async () => {
    const clock = new FakeClock();
    const { logger } = captureLogger();
    const reconciled: ObjectKey[] = [];
    const stalled: ObjectKey[] = [];
    const controller = new Controller({
      name: "c",
      clock,
      logger,
      maxConsecutiveFailures: 1,
      reconcile: async (key) => {
        reconciled.push(key);
        throw new TransientError("apiserver unavailable");
      },
      onStalled: async (key) => void stalled.push(key),
    });
    controller.enqueue({ namespace: "shop", name: "web" });
    controller.enqueue({ namespace: "", name: "prod" });
    controller.start();
    await clock.advance(10);
    const expected = [
      { namespace: "shop", name: "web" },
      { namespace: "", name: "prod" },
    ];
    assert.deepEqual(reconciled, expected);
    assert.deepEqual(stalled, expected);
    assert.equal(controller.failureCount({ namespace: "shop", name: "web" }), 1);
    await controller.shutdown(1000);
  });

  it("never hands the reconciler a malformed key: one that would not read back as itself is refused", async () => {
    // GIVEN a controller whose resync lists, beside a good key, one whose name holds a "/"
    const { clock, controller, calls, lines } = setup(async () => ({}), {
      resyncPeriodMs: 1_000,
      listKeys: () => [
        { namespace: "ns", name: "a/b" },
        { namespace: "ns", name: "c" },
      ],
    });
    // WHEN such keys are enqueued or woken: "ns" + "a/b" and "ns/a" + "b" would both be the text "ns/a/b"
    assert.throws(() => controller.enqueue({ namespace: "ns", name: "a/b" }), /metadata.name "a\/b" holds a "\/"/);
    assert.throws(() => controller.wake({ namespace: "ns/a", name: "b" }), /metadata.namespace "ns\/a" holds a "\/"/);
    controller.start();
    await clock.advance(1_000);
    // THEN the reconciler sees only the good key; the resync says what it skipped and keeps running
    assert.deepEqual(
      calls.map((c) => c.key),
      ["ns/c"],
    );
    assert.ok(lines.some((l) => l.msg === "resync skipped a key that cannot be queued"));
    await clock.advance(1_000);
    assert.equal(calls.length, 2, "the next resync ran");
  });

  it("the periodic resync waits behind changes: a key enqueued during it is reconciled next", async () => {
    // GIVEN a controller with one worker whose resync finds five keys, each reconcile taking 10 ms
    const { clock, controller, calls } = setup(
      async () => {
        await sleep(clock, 10);
        return {};
      },
      {
        resyncPeriodMs: 1_000,
        listKeys: () => ["a", "b", "c", "d", "e"].map((name) => ({ namespace: "ns", name })),
      },
    );
    controller.start();
    await clock.advance(1_000);
    // WHEN a change arrives while the first resynced key is being reconciled
    controller.enqueue(objectKey("ns/changed"));
    await clock.advance(100);
    // THEN it is reconciled right after, before the rest of the resync
    assert.deepEqual(
      calls.map((c) => c.key),
      ["ns/a", "ns/changed", "ns/b", "ns/c", "ns/d", "ns/e"],
    );
    await controller.shutdown(1000);
  });

  it("has work while a key waits at normal priority or is held by a worker; not for delayed or low-priority keys", async () => {
    // GIVEN a controller with one worker whose reconcile of one key waits for the test
    const release = deferred();
    const { clock, controller } = setup(async (key) => {
      if (key === "ns/held") await release.promise;
      return key === "ns/held" ? { requeueAfterMs: 60_000 } : {};
    });
    controller.enqueue(objectKey("ns/resynced"), "low");
    assert.equal(controller.hasWork(), false, "a low-priority look (a resync, the first list) is not work waiting");
    controller.enqueue(objectKey("ns/held"));
    controller.enqueue(objectKey("ns/next"));
    assert.equal(controller.hasWork(), true, "keys waiting");
    controller.start();
    await settle();
    assert.equal(controller.hasWork(), true, "one held by the worker, one waiting");
    release.resolve();
    await clock.advance(10);
    // THEN with only a delayed key (requeueAfterMs) left there is no work
    assert.equal(controller.hasWork(), false, "a delayed key is not work yet");
    await controller.shutdown(1000);
  });

  it("reconciles again after requeueAfterMs without a change", async () => {
    const { clock, controller, calls, metrics } = setup(async (_key, attempt) =>
      attempt === 1 ? { requeueAfterMs: 30_000 } : {},
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(29_999);
    assert.equal(calls.length, 1);
    await clock.advance(1);
    assert.deepEqual(
      calls.map((c) => c.at),
      [0, 30_000],
    );
    await clock.advance(3_600_000);
    assert.equal(calls.length, 2);
    assert.equal(await counter(metrics, "controller_runtime_reconcile_total", { result: "requeue_after" }), 1);
  });

  it("retries a failing key with per-key exponential backoff and clears it on success", async () => {
    const { clock, controller, calls, stalled, lines } = setup(async (_key, attempt) => {
      if (attempt <= 3) throw new TransientError("apiserver unavailable");
      return {};
    });
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(10_000);
    assert.deepEqual(
      calls.map((c) => c.at),
      [0, 5, 15, 35],
    );
    assert.equal(controller.failureCount(objectKey("ns/a")), 0);
    assert.equal(stalled.length, 0);
    const failures = lines.filter((l) => l.msg === "reconcile failed").map((l) => l.failures);
    assert.deepEqual(failures, [1, 2, 3]);
    assert.equal(lines.at(-1)?.recovered, true);
  });

  it("after maxConsecutiveFailures fast retries, keeps retrying in the slow lane and never parks the key", async () => {
    // GIVEN a key that always fails, 4 fast retries and a 5-minute slow lane (jitter pinned to the middle)
    const { clock, controller, calls, stalled, metrics, lines } = setup(
      async () => {
        throw new TransientError("apiserver unavailable");
      },
      { maxConsecutiveFailures: 4, slowRetryIntervalMs: 300_000, random: () => 0.5 },
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    // WHEN an hour passes without any change or resync
    await clock.advance(3_600_000);
    // THEN the fast backoff runs 4 times, then one attempt every 5 minutes
    const at = calls.map((c) => c.at);
    assert.deepEqual(at.slice(0, 4), [0, 5, 15, 35]);
    assert.deepEqual(
      at.slice(4, 7).map((t, i) => t - at[3 + i]!),
      [300_000, 300_000, 300_000],
    );
    assert.equal(calls.length, 4 + 11, "11 slow retries in the hour after the fast ones");
    // and every failed attempt from the 4th on is reported (the handler writes idempotently), with the interval
    assert.deepEqual(
      stalled.map((s) => s.failures),
      Array.from({ length: 12 }, (_, i) => 4 + i),
    );
    assert.equal(clock.pending, 1, "the next slow retry is scheduled");
    assert.equal(controller.failureCount(objectKey("ns/a")), 15);
    assert.equal(await counter(metrics, "controller_runtime_reconcile_errors_total", {}), 15);
    assert.ok(lines.some((l) => l.msg === "reconcile stalled; retrying slowly" && l.retryInMs === 300_000));
  });

  it("a reconcile that only waits on its background work keeps the key's failure count: failing work still stalls", async () => {
    // GIVEN a key whose work fails, then is waited on (still running), alternately: a slow source timing out again
    const { clock, controller, calls, stalled } = setup(
      async (_key, call) => {
        if (call % 2 === 0) return { requeueAfterMs: 1_000, waiting: true };
        throw new TransientError("the chart source did not answer");
      },
      { maxConsecutiveFailures: 3, slowRetryIntervalMs: 300_000, random: () => 0.5 },
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(10_000);
    // THEN the waits between failures do not reset the count: the third failure stalls the key
    assert.ok(calls.length >= 5);
    assert.equal(controller.failureCount(objectKey("ns/a")), 3);
    assert.deepEqual(
      stalled.map((s) => s.failures),
      [3],
    );
  });

  it("jitters the slow lane by ±10 % so stalled keys do not retry in lockstep", async () => {
    for (const [random, expected] of [
      [0, 270_000],
      [0.999_999, 330_000],
    ] as const) {
      const { clock, controller, calls } = setup(
        async () => {
          throw new Error("boom");
        },
        { maxConsecutiveFailures: 1, slowRetryIntervalMs: 300_000, random: () => random },
      );
      controller.enqueue(objectKey("ns/a"));
      controller.start();
      await clock.advance(400_000);
      assert.equal(calls.length, 2);
      assert.ok(Math.abs(calls[1]!.at - expected) < 1, `retry at ${calls[1]!.at}, expected about ${expected}`);
    }
  });

  it("recovers a stalled key by itself once the cause is gone, and starts from the fast backoff again", async () => {
    // GIVEN a brown-out: the reconcile fails until `healed`
    let healed = false;
    const { clock, controller, calls, stalled, lines } = setup(
      async () => {
        if (!healed) throw new TransientError("503 Service Unavailable");
        return {};
      },
      { maxConsecutiveFailures: 2, slowRetryIntervalMs: 300_000, random: () => 0.5 },
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(60_000);
    assert.equal(calls.length, 2);
    assert.equal(stalled.length, 1);
    // WHEN the cause goes away, and nobody touches the object
    healed = true;
    await clock.advance(300_000);
    // THEN the slow retry succeeds, the count is cleared and the recovery logged
    assert.equal(calls.length, 3);
    assert.equal(controller.failureCount(objectKey("ns/a")), 0);
    assert.equal(lines.at(-1)?.recovered, true);
    assert.equal(clock.pending, 0, "nothing left scheduled for a converged key");
    // and a later failure starts from the fast backoff again
    healed = false;
    controller.enqueue(objectKey("ns/a"));
    await clock.advance(1_000);
    assert.deepEqual(
      calls.slice(3).map((c) => c.at - calls[3]!.at),
      [0, 5],
    );
  });

  it("retries a stalled key at once on a change, reporting the latest error, without a backoff series", async () => {
    let broken = true;
    const { clock, controller, calls, stalled } = setup(
      async () => {
        if (broken) throw new Error(`still broken at ${clock.monotonicMs()}`);
        return {};
      },
      { maxConsecutiveFailures: 2 },
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(60_000);
    assert.equal(calls.length, 2);
    assert.equal(stalled.length, 1);
    // WHEN the object changes but the cause persists: one attempt, reported again, no backoff series
    controller.enqueue(objectKey("ns/a"));
    await clock.advance(60_000);
    assert.equal(calls.length, 3);
    assert.equal(stalled.length, 2);
    assert.equal(stalled[1]?.failures, 3);
    assert.match(String(stalled[1]?.error), /still broken at/);
    // WHEN the cause is fixed: the next change succeeds and the count is cleared
    broken = false;
    controller.enqueue(objectKey("ns/a"));
    await clock.advance(1);
    assert.equal(calls.length, 4);
    assert.equal(controller.failureCount(objectKey("ns/a")), 0);
  });

  it("passes the slow lane's interval to the stalled handler, for its message", async () => {
    const intervals: number[] = [];
    const { clock, controller } = setup(
      async () => {
        throw new Error("boom");
      },
      {
        maxConsecutiveFailures: 1,
        slowRetryIntervalMs: 120_000,
        onStalled: async (_key, _error, _failures, retryIntervalMs) => void intervals.push(retryIntervalMs),
      },
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(1);
    assert.deepEqual(intervals, [120_000]);
  });

  it("does not retry a PermanentError: the key waits for a change", async () => {
    const { clock, controller, calls, stalled, metrics, lines } = setup(async () => {
      throw new PermanentError("spec.storage cannot shrink from 10Gi to 5Gi");
    });
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(24 * 3_600_000);
    assert.equal(calls.length, 1);
    assert.equal(stalled.length, 0);
    assert.equal(controller.failureCount(objectKey("ns/a")), 0);
    assert.equal(clock.pending, 0);
    assert.equal(await counter(metrics, "controller_runtime_reconcile_total", { result: "error" }), 1);
    assert.equal(lines.find((l) => l.result === "error")?.permanent, true);
    controller.enqueue(objectKey("ns/a"));
    await clock.advance(1);
    assert.equal(calls.length, 2);
  });

  it("looks again in the slow lane at a PermanentError whose cause is outside the spec, until it is gone", async () => {
    // GIVEN a key refused because another object holds a child's name, until someone deletes that object
    const clash = { present: true };
    const { clock, controller, calls, stalled, lines } = setup(
      async () => {
        if (clash.present) {
          throw new PermanentError("Service ns/a is controlled by Deployment other", {
            reason: "ChildOwnedElsewhere",
            outsideSpec: true,
          });
        }
        return {};
      },
      { maxConsecutiveFailures: 4, slowRetryIntervalMs: 300_000, random: () => 0.5 },
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    // WHEN 20 minutes pass without any change
    await clock.advance(1_200_000);
    // THEN it was looked at once, then every 5 minutes: no fast backoff, no Stalled report, no failure count
    assert.deepEqual(
      calls.map((c) => c.at),
      [0, 300_000, 600_000, 900_000, 1_200_000],
    );
    assert.equal(stalled.length, 0);
    assert.equal(controller.failureCount(objectKey("ns/a")), 0);
    assert.ok(
      lines.some((l) => l.msg === "reconcile failed permanently; looking again slowly" && l.recheckInMs === 300_000),
    );
    // and once the cause is gone, the next look succeeds and nothing more is scheduled
    clash.present = false;
    await clock.advance(300_000);
    assert.equal(calls.length, 6);
    assert.equal(clock.pending, 0);
    await clock.advance(3_600_000);
    assert.equal(calls.length, 6);
  });

  it("retries a 409 Conflict after a short fixed delay, not exponential backoff", async () => {
    const { clock, controller, calls, metrics } = setup(async (_key, attempt) => {
      if (attempt <= 3) throw new ConflictError(409, "the object has been modified", "Conflict");
      return {};
    });
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(10_000);
    assert.deepEqual(
      calls.map((c) => c.at),
      [0, 100, 200, 300],
    );
    assert.equal(await counter(metrics, "controller_runtime_reconcile_total", { result: "requeue" }), 3);
  });

  it("retries the keys an apiserver outage failed as soon as it is back, even from the slow lane; others keep their backoff", async () => {
    // GIVEN an apiserver down for 3 minutes (every write 503), 4 fast retries, a 5-minute slow lane
    const apiserver = { ready: false };
    const unavailable = () => new ServerError(503, "the server is currently unable to handle the request");
    const { clock, controller, calls, stalled } = setup(
      async (key) => {
        if (key === "ns/degraded") throw new PermanentError("spec.storage cannot shrink");
        if (key === "ns/chart") throw new TransientError("chart source https://charts.example.com: 502");
        if (!apiserver.ready) throw new TransientError("reconcile ns/outage: 503", { cause: unavailable() });
        return {};
      },
      {
        maxConsecutiveFailures: 4,
        slowRetryIntervalMs: 300_000,
        random: () => 0.5,
        outageRecovery: { probe: async () => apiserver.ready },
      },
    );
    for (const key of ["ns/outage", "ns/degraded", "ns/chart"]) controller.enqueue(objectKey(key));
    controller.start();
    await clock.advance(180_000);
    assert.equal(
      controller.failureCount(objectKey("ns/outage")),
      4,
      "in the slow lane, next try 5 minutes after the 4th",
    );
    assert.equal(stalled.filter((s) => s.key === "ns/outage").length, 1);
    // WHEN the apiserver comes back
    apiserver.ready = true;
    const before = calls.length;
    await clock.advance(3_000);
    // THEN the key the outage failed is retried within one probe interval, and succeeds
    const after = calls.slice(before);
    assert.deepEqual(
      after.map((c) => c.key),
      ["ns/outage"],
    );
    assert.ok(after[0]!.at <= 182_000, `retried at ${after[0]!.at} ms, 2 s after the recovery at most`);
    assert.equal(controller.failureCount(objectKey("ns/outage")), 0);
    // and its superseded slow-lane retry does not reconcile it a second time
    await clock.advance(600_000);
    assert.equal(calls.filter((c) => c.key === "ns/outage").length, 4 + 1);
    // the PermanentError key was tried once; the chart key kept its slow lane (5 min after its 4th failure)
    assert.equal(calls.filter((c) => c.key === "ns/degraded").length, 1);
    const chart = calls.filter((c) => c.key === "ns/chart").map((c) => c.at);
    assert.ok(
      chart.every((at) => at < 180_000 || at >= 300_035),
      `the chart key's retries follow its own backoff: ${JSON.stringify(chart)}`,
    );
  });

  it("after an outage, a conflict on the stale cache does not tip a released key into the slow lane", async () => {
    // GIVEN a key that failed past maxConsecutiveFailures during an outage
    const apiserver = { ready: false };
    let afterRecovery = 0;
    const { clock, controller, calls, stalled } = setup(
      async () => {
        if (!apiserver.ready) throw new TransientError("503", { cause: new ServerError(503, "unavailable") });
        // its first try after the outage meets a 409: the cache was stale
        if (afterRecovery++ === 0) throw new ConflictError(409, "the object has been modified", "Conflict");
        return {};
      },
      { maxConsecutiveFailures: 4, random: () => 0.5, outageRecovery: { probe: async () => apiserver.ready } },
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(60_000);
    const reports = stalled.length;
    assert.ok(reports > 0, "reported stalled during the outage");
    apiserver.ready = true;
    await clock.advance(5_000);
    // THEN the conflict is retried after 100 ms, and the key converges within seconds, reported stalled no more
    const tries = calls.filter((c) => c.at >= 60_000).map((c) => c.at);
    assert.equal(tries.length, 2);
    assert.equal(tries[1]! - tries[0]!, 100);
    assert.ok(tries[0]! <= 62_000, `retried at ${tries[0]} ms, within 2 s of the recovery`);
    assert.equal(stalled.length, reports);
    assert.equal(controller.failureCount(objectKey("ns/a")), 0);
  });

  it("runs different keys concurrently but never two reconciles of one key", async () => {
    const clock = new FakeClock();
    const { logger } = captureLogger();
    const running = new Map<string, number>();
    let maxPerKey = 0;
    let maxTotal = 0;
    const gates: (() => void)[] = [];
    const controller = new Controller({
      name: "c",
      clock,
      logger,
      concurrency: 3,
      reconcile: async (requested) => {
        const key = formatObjectKey(requested);
        running.set(key, (running.get(key) ?? 0) + 1);
        maxPerKey = Math.max(maxPerKey, running.get(key) ?? 0);
        maxTotal = Math.max(
          maxTotal,
          [...running.values()].reduce((a, b) => a + b, 0),
        );
        await new Promise<void>((resolve) => gates.push(resolve));
        running.set(key, (running.get(key) ?? 1) - 1);
        return {};
      },
    });
    controller.start();
    for (const key of ["ns/a", "ns/b", "ns/c", "ns/a", "ns/d"]) controller.enqueue(objectKey(key));
    await settle();
    controller.enqueue(objectKey("ns/a")); // changes while ns/a is in flight
    await settle();
    assert.equal(gates.length, 3, "three workers busy: a, b, c");
    while (gates.length > 0) {
      gates.shift()?.();
      await settle();
    }
    assert.equal(maxTotal, 3);
    assert.equal(maxPerKey, 1);
    await controller.shutdown(1000);
  });

  it("counts the writes of concurrent reconciles separately", async () => {
    const clock = new FakeClock();
    const { logger, lines } = captureLogger();
    const controller = new Controller({
      name: "c",
      clock,
      logger,
      concurrency: 2,
      reconcile: async (key, { writes }) => {
        const n = key.name === "a" ? 3 : 1;
        for (let i = 0; i < n; i++) {
          await settle();
          writes.count += 1;
        }
        return {};
      },
    });
    controller.start();
    controller.enqueue(objectKey("ns/a"));
    controller.enqueue(objectKey("ns/b"));
    for (let i = 0; i < 10 && lines.filter((l) => l.msg === "reconciled").length < 2; i++) await settle();
    const byKey = Object.fromEntries(lines.filter((l) => l.msg === "reconciled").map((l) => [l.key, l.writes]));
    assert.deepEqual(byKey, { "ns/a": 3, "ns/b": 1 });
  });

  it("logs the write count a reconciler reports itself", async () => {
    const { clock, controller, lines } = setup(async (_key, _attempt, { writes }) => {
      writes.count += 7;
      return {};
    });
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(1);
    assert.equal(lines.find((l) => l.msg === "reconciled")?.writes, 7);
  });

  it("hands each reconcile a fresh tally: the next reconcile of a key that wrote logs writes: 0", async () => {
    // GIVEN a key whose first reconcile writes twice and asks to look again, and whose second writes nothing
    const { clock, controller, lines } = setup(async (_key, attempt, { writes }) => {
      assert.equal(writes.count, 0, "the tally starts at 0");
      if (attempt > 1) return {};
      writes.count += 2;
      return { requeueAfterMs: 1000 };
    });
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(1000);
    // THEN the converged reconcile's line says 0
    assert.deepEqual(
      lines.filter((l) => l.msg === "reconciled").map((l) => [l.result, l.writes]),
      [
        ["requeue_after", 2],
        ["success", 0],
      ],
    );
  });

  it("logs the writes of a reconcile that throws, on every kind of failure line", async () => {
    // GIVEN reconciles that write and then fail: transiently (then stalled), with a conflict, permanently
    const failures: Record<string, () => Error> = {
      "ns/transient": () => new TransientError("apiserver unavailable"),
      "ns/conflict": () => new ConflictError(409, "the object has been modified"),
      "ns/permanent": () => new PermanentError("bad spec", { reason: "InvalidSpec" }),
    };
    const clock = new FakeClock();
    const { controller, lines } = setup(
      async (key, _attempt, { writes }) => {
        writes.count += 1;
        await sleep(clock, 1);
        writes.count += 1; // the refused write is one asked for too
        throw (failures[key] ?? (() => new Error("boom")))();
      },
      { clock, concurrency: 3, maxConsecutiveFailures: 2 },
    );
    for (const key of Object.keys(failures)) controller.enqueue(objectKey(key));
    controller.start();
    await clock.advance(1000);
    // THEN every kind of failure line was logged, each with the writes made before the throw
    const messages = [
      "reconcile failed",
      "reconcile conflicted",
      "reconcile failed permanently",
      "reconcile stalled; retrying slowly",
    ];
    const failed = lines.filter((l) => messages.includes(String(l.msg)));
    assert.deepEqual(new Set(failed.map((l) => l.msg)), new Set(messages));
    assert.deepEqual(
      failed.map((l) => l.writes),
      failed.map(() => 2),
    );
  });

  it("reports an onStalled failure in the log instead of crashing the worker", async () => {
    const { clock, controller, lines, calls } = setup(
      async () => {
        throw new Error("boom");
      },
      {
        maxConsecutiveFailures: 1,
        onStalled: async () => {
          throw new Error("status write forbidden");
        },
      },
    );
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(10);
    assert.ok(lines.some((l) => l.msg === "could not record the stalled state on the object"));
    controller.enqueue(objectKey("ns/b"));
    await clock.advance(10);
    assert.equal(calls.length, 2, "the worker is still alive");
  });

  it("shutdown waits for the reconcile in flight, and takes no new work", async () => {
    const gate = deferred();
    const { clock, controller, calls } = setup(async () => {
      await gate.promise;
      return { requeueAfterMs: 10 };
    });
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(0);
    let finished: boolean | undefined;
    const stopping = controller.shutdown(5_000).then((drained) => (finished = drained));
    controller.enqueue(objectKey("ns/b"));
    await clock.advance(1_000);
    assert.equal(finished, undefined, "still waiting for ns/a");
    gate.resolve();
    await stopping;
    assert.equal(finished, true);
    await clock.advance(60_000);
    assert.deepEqual(
      calls.map((c) => c.key),
      ["ns/a"],
    );
  });

  it("shutdown gives up on a reconcile that outlives the deadline", async () => {
    const { clock, controller } = setup(() => new Promise<ReconcileResult>(() => {}));
    controller.enqueue(objectKey("ns/a"));
    controller.start();
    await clock.advance(0);
    let finished: boolean | undefined;
    void controller.shutdown(5_000).then((drained) => (finished = drained));
    await clock.advance(4_999);
    assert.equal(finished, undefined);
    await clock.advance(1);
    assert.equal(finished, false);
  });

  it("rejects a maxConsecutiveFailures below 1 with a message naming the field", () => {
    assert.throws(() => setup(async () => ({}), { maxConsecutiveFailures: 0 }), /maxConsecutiveFailures/);
    assert.throws(() => setup(async () => ({}), { slowRetryIntervalMs: 0 }), /slowRetryIntervalMs/);
  });
});
