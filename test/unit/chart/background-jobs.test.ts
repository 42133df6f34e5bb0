/**
 * Slow chart work runs beside the reconcile workers: a job that settles within the grace is answered at once, a
 * slower one is left running and its outcome handed to a later call; the chart branch says "look again" without
 * a status write meanwhile, so a hostile source holds no worker.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderableChartKinds } from "../../../api/index.ts";
import type { ChartRenderer } from "../../../chart/index.ts";
import { BackgroundJobs, chartJobPollMs, chartJobSafetyPollMs } from "../../../operator/chart/index.ts";
import { formatObjectKey, parseObjectKey } from "../../../kube/object-key.ts";
import { FakeClock, settle } from "../runtime/fake-clock.ts";
import { harness } from "../reconcile/setup.ts";

/** A promise and the function that resolves it. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("BackgroundJobs", () => {
  test("a job that settles within the grace is answered at once", async () => {
    const jobs = new BackgroundJobs({ clock: new FakeClock() });
    assert.deepEqual(await jobs.run(parseObjectKey("ns/a"), "1", async () => 42), {
      settled: true,
      ok: true,
      value: 42,
    });
    assert.equal(jobs.size, 0, "collected");
  });

  test("a slow job is left running after the grace, and its outcome goes to the next call with the same id", async () => {
    const clock = new FakeClock();
    const jobs = new BackgroundJobs({ clock, graceMs: 250 });
    const slow = deferred<string>();
    let started = 0;
    const work = () => (started++, slow.promise);
    const first = jobs.run(parseObjectKey("ns/a"), "1", work);
    await settle();
    await clock.advance(250);
    assert.deepEqual(await first, { settled: false });
    // Asked again while it runs: answered at once, without a second grace that would hold the worker.
    assert.deepEqual(await jobs.run(parseObjectKey("ns/a"), "1", work), { settled: false });
    slow.resolve("chart");
    await settle(); // settled: the next look collects the outcome
    assert.deepEqual(await jobs.run(parseObjectKey("ns/a"), "1", work), { settled: true, ok: true, value: "chart" });
    assert.equal(started, 1, "one job, however often asked");
  });

  test("a forgotten job is dropped: its outcome is never kept and its key never woken", async () => {
    // GIVEN a job left running for an instance
    const clock = new FakeClock();
    const woken: string[] = [];
    const jobs = new BackgroundJobs({ clock, onSettled: (key) => woken.push(formatObjectKey(key)) });
    const slow = deferred<string>();
    const first = jobs.run(parseObjectKey("ns/a"), "1", () => slow.promise);
    await settle();
    await clock.advance(0);
    assert.deepEqual(await first, { settled: false });
    // WHEN the instance is deleted and its job forgotten, then the job ends
    jobs.forget(parseObjectKey("ns/a"));
    slow.resolve("chart");
    await settle();
    // THEN nothing of it is kept and nobody is woken
    assert.equal(jobs.size, 0);
    assert.deepEqual(woken, []);
  });

  test("by default only work that needs no I/O settles in the call: anything slower holds no worker", async () => {
    const clock = new FakeClock();
    const jobs = new BackgroundJobs({ clock });
    const io = deferred<string>();
    const first = jobs.run(parseObjectKey("ns/a"), "1", () => io.promise);
    await settle();
    await clock.advance(0);
    assert.deepEqual(await first, { settled: false }, "answered after no grace at all");
  });

  test("a job that outlived its grace wakes its key once it settles, and the wake finds the outcome", async () => {
    const clock = new FakeClock();
    const woken: string[] = [];
    const jobs = new BackgroundJobs({ clock, onSettled: (key) => woken.push(formatObjectKey(key)) });
    assert.equal(jobs.wakes, true);
    const slow = deferred<string>();
    const first = jobs.run(parseObjectKey("ns/a"), "1", () => slow.promise);
    await settle();
    await clock.advance(0);
    assert.deepEqual(await first, { settled: false });
    assert.deepEqual(await jobs.run(parseObjectKey("ns/a"), "1", () => slow.promise), { settled: false });
    assert.deepEqual(woken, [], "not before it settled");
    slow.resolve("chart");
    await settle();
    assert.deepEqual(woken, ["ns/a"], "woken once, however often it was asked");
    assert.deepEqual(await jobs.run(parseObjectKey("ns/a"), "1", () => slow.promise), {
      settled: true,
      ok: true,
      value: "chart",
    });
  });

  test("no wake for a job answered within its grace, nor for one a new id superseded", async () => {
    const clock = new FakeClock();
    const woken: string[] = [];
    const jobs = new BackgroundJobs({ clock, onSettled: (key) => woken.push(formatObjectKey(key)) });
    assert.deepEqual(await jobs.run(parseObjectKey("ns/a"), "1", async () => 1), { settled: true, ok: true, value: 1 });
    const old = deferred<number>();
    const stale = jobs.run(parseObjectKey("ns/b"), "1", () => old.promise);
    await settle();
    await clock.advance(0);
    assert.deepEqual(await stale, { settled: false });
    const current = deferred<number>();
    const next = jobs.run(parseObjectKey("ns/b"), "2", () => current.promise);
    await settle();
    await clock.advance(0);
    assert.deepEqual(await next, { settled: false });
    old.resolve(1);
    await settle();
    assert.deepEqual(woken, [], "the superseded job's outcome is dropped: nothing to wake for");
    current.resolve(2);
    await settle();
    assert.deepEqual(woken, ["ns/b"]);
  });

  test("a new id (the spec changed) starts a new job; a failure is an outcome too", async () => {
    const jobs = new BackgroundJobs({ clock: new FakeClock() });
    const never = new Promise<string>(() => undefined);
    void jobs.run(parseObjectKey("ns/a"), "1", () => never);
    const failed = await jobs.run(parseObjectKey("ns/a"), "2", async () => {
      throw new Error("404");
    });
    assert.equal(failed.settled && !failed.ok && (failed.error as Error).message, "404");
  });
});

test("jobs run a bounded number at once: a flood of slow charts cannot fetch thousands at a time", async () => {
  const jobs = new BackgroundJobs({ clock: new FakeClock(), graceMs: 0, maxRunning: 2 });
  let running = 0;
  let most = 0;
  const gates: (() => void)[] = [];
  const work = () => {
    running += 1;
    most = Math.max(most, running);
    return new Promise<void>((resolve) => gates.push(() => ((running -= 1), resolve())));
  };
  for (let i = 0; i < 5; i++) void jobs.run({ namespace: "flood", name: `i-${i}` }, "1", work);
  await settle();
  assert.equal(most, 2);
  while (gates.length > 0) {
    gates.shift()!();
    await settle();
  }
  assert.equal(most, 2, "never more than two");
});

test("a job superseded or forgotten while it waits for a slot never runs and lets go of its work", async () => {
  // GIVEN the only slot taken by another namespace's slow job
  const clock = new FakeClock();
  const jobs = new BackgroundJobs({ clock, maxRunning: 1 });
  const look = async (key: string, id: string, work: () => Promise<string>) => {
    const answer = jobs.run(parseObjectKey(key), id, work);
    await settle();
    await clock.advance(0);
    return answer;
  };
  const busy = deferred<string>();
  await look("other/slow", "1", () => busy.promise);
  // WHEN a tenant edits its instance three times meanwhile, and deletes another whose job waits too
  const started: string[] = [];
  const work = (id: string) => async () => (started.push(id), id);
  for (const id of ["1", "2", "3"]) assert.deepEqual(await look("ns/a", id, work(id)), { settled: false });
  assert.deepEqual(await look("ns/gone", "1", work("gone")), { settled: false });
  jobs.forget(parseObjectKey("ns/gone"));
  busy.resolve("done");
  await settle();
  // THEN only the latest edit's work ran, and its outcome is there for the next look
  assert.deepEqual(started, ["3"]);
  assert.deepEqual(await look("ns/a", "3", work("3")), { settled: true, ok: true, value: "3" });
});

test("a caller whose job is superseded within its grace is told not yet, never the dropped outcome", async () => {
  const clock = new FakeClock();
  const jobs = new BackgroundJobs({ clock, graceMs: 250, maxRunning: 1 });
  const busy = deferred<string>();
  const held = jobs.run(parseObjectKey("other/slow"), "1", () => busy.promise);
  await settle();
  await clock.advance(250);
  await held;
  // GIVEN a look waiting in its grace for a job queued behind the busy slot
  const first = jobs.run(parseObjectKey("ns/a"), "1", async () => "one");
  await settle();
  // WHEN the spec changes meanwhile and the slot comes before the grace is over
  const second = jobs.run(parseObjectKey("ns/a"), "2", async () => "two");
  busy.resolve("done");
  await settle();
  // THEN the first look is told "not yet"; the second gets its own outcome
  assert.deepEqual(await first, { settled: false });
  await clock.advance(250);
  assert.deepEqual(await second, { settled: true, ok: true, value: "two" });
});

test("a job that re-checks a Ready instance waits for a slot behind every job for a change", async () => {
  const jobs = new BackgroundJobs({ clock: new FakeClock(), graceMs: 0, maxRunning: 1 });
  const started: string[] = [];
  const gates: (() => void)[] = [];
  const work = (name: string) => () => {
    started.push(name);
    return new Promise<void>((resolve) => gates.push(resolve));
  };
  // GIVEN three re-checks queued after a restart, the first running
  for (const name of ["a", "b", "c"]) void jobs.run({ namespace: "shop", name }, "1", work(name), "low");
  await settle();
  // WHEN a change arrives
  void jobs.run({ namespace: "shop", name: "changed" }, "1", work("changed"));
  while (gates.length > 0) {
    gates.shift()!();
    await settle();
  }
  // THEN it runs next
  assert.deepEqual(started, ["a", "changed", "b", "c"]);
});

describe("a chart instance whose source does not answer", () => {
  test("holds no worker: the reconcile returns after the grace, asks to look again, writes nothing", async () => {
    const h = harness();
    const clock = new FakeClock();
    const source = deferred<Uint8Array>();
    const renderer: ChartRenderer = {
      render: async () => ({ manifest: "", hooks: [], crds: [] }),
    };
    Object.assign(h.deps, {
      chart: {
        renderer,
        fetchChart: () => source.promise,
        allowedKinds: renderableChartKinds,
        jobs: new BackgroundJobs({ clock }),
      },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    const before = h.cluster.writeLines().length;
    const outcome = h.run();
    await settle();
    await clock.advance(250);
    const waited = await outcome;
    assert.equal(waited.requeueAfterMs, chartJobPollMs);
    assert.equal(waited.waiting, true, "neither a success nor a failure: the key keeps its failure count");
    assert.deepEqual(
      h.cluster
        .writeLines()
        .slice(before)
        .filter((line) => !line.startsWith("setFinalizers")),
      [],
      "no status write while the chart is being fetched",
    );
  });

  test("with jobs that wake their key, looks again only as a slow safety net", async () => {
    const h = harness();
    const clock = new FakeClock();
    const source = deferred<Uint8Array>();
    Object.assign(h.deps, {
      chart: {
        renderer: { render: async () => ({ manifest: "", hooks: [], crds: [] }) },
        fetchChart: () => source.promise,
        allowedKinds: renderableChartKinds,
        jobs: new BackgroundJobs({ clock, onSettled: () => undefined }),
      },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    const outcome = h.run();
    await settle();
    await clock.advance(0);
    const waited = await outcome;
    assert.equal(waited.waiting, true);
    assert.equal(waited.requeueAfterMs, chartJobSafetyPollMs);
  });
});
