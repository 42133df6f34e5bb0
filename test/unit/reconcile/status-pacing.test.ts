/**
 * Status writes that only report progress are paced (status-pacing.ts): a rollout costs the Deployment apply, the
 * status that turns it Progressing, the status that turns it Ready, and its RolloutComplete event, however often
 * the counts move between them within the interval; a rollout that takes longer still shows its counts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCondition } from "../../../api/index.ts";
import { progressOnly, StatusPacer } from "../../../operator/reconcile/index.ts";
import { harness, type Ran } from "./setup.ts";

const spec = { image: "nginx:1.27", replicas: 2, port: 8080 };

/** An instance Running on nginx:1.27 under a reconcile with a pacer of `intervalMs`, requests reset. */
async function runningInstance(intervalMs = 5000) {
  const h = harness({ statusPacer: new StatusPacer(intervalMs) });
  h.cluster.createInstance("web", spec);
  await h.run();
  h.cluster.rollOut("Deployment", "web");
  await h.advance(intervalMs);
  await h.run();
  assert.equal(h.cluster.instance("web")?.status?.phase, "Running", "precondition: the instance runs");
  h.cluster.reset();
  return h;
}

function requestLines(h: ReturnType<typeof harness>): string[] {
  return h.cluster.allWrites().map((r) => (r.verb === "event" ? `event ${r.name}` : `${r.verb} ${r.kind}/${r.name}`));
}

function newImage(h: ReturnType<typeof harness>): void {
  h.cluster.edit(
    "example.com/v1",
    "MyAppInstance",
    "web",
    (o) => void ((o["spec"] as { image: string }).image = "nginx:1.28"),
  );
}

describe("reconcile: paced status during a rollout", () => {
  it("writes a quick rollout in 4 writes: the apply, Progressing, Ready, RolloutComplete", async () => {
    const h = await runningInstance();

    // WHEN the image changes and the rollout runs its steps within a second
    newImage(h);
    await h.run();
    const first = h.cluster.instance("web");
    assert.equal(findCondition(first?.status?.conditions, "Ready")?.status, "False");
    assert.equal(findCondition(first?.status?.conditions, "Progressing")?.reason, "RollingOut");
    assert.equal(first?.status?.observedGeneration, first?.metadata.generation);

    const paced: Ran[] = [];
    for (const counts of [
      { updated: 1, ready: 2, replicas: 3 },
      { updated: 1, ready: 3, replicas: 3 },
      { updated: 2, ready: 2, replicas: 3 },
      { updated: 2, ready: 1, replicas: 2 },
    ]) {
      await h.advance(200);
      h.cluster.progress("Deployment", "web", counts);
      paced.push(await h.run());
    }
    // THEN the counts in between (old pods terminating, new ones not yet ready: all still the rollout) are not
    // written, and each reconcile asks to look again when they may be
    assert.deepEqual(
      paced.map((outcome) => [outcome.writes, outcome.requeueAfterMs]),
      [
        [0, 4800],
        [0, 4600],
        [0, 4400],
        [0, 4200],
      ],
    );
    await h.advance(200);
    h.cluster.rollOut("Deployment", "web");
    await h.run();

    // and the end is written at once, Ready at the new image: 4 writes in all
    assert.deepEqual(requestLines(h), [
      "apply Deployment/web",
      "applyStatus MyAppInstance/web",
      "applyStatus MyAppInstance/web",
      "event RolloutComplete",
    ]);
    const done = h.cluster.instance("web");
    assert.equal(findCondition(done?.status?.conditions, "Ready")?.status, "True");
    assert.equal(done?.status?.image, "nginx:1.28");
  });

  it("writes the counts of a rollout that takes longer once the interval has passed, with its RollingOut event", async () => {
    const h = await runningInstance();
    newImage(h);
    await h.run();
    h.cluster.reset();

    await h.advance(1000);
    h.cluster.progress("Deployment", "web", { updated: 1, ready: 2, replicas: 3 });
    assert.equal((await h.run()).requeueAfterMs, 4000);
    assert.deepEqual(requestLines(h), []);

    // WHEN the requeue comes (nothing else moved) THEN the counts as they are now are written
    await h.advance(4000);
    const outcome = await h.run();
    assert.equal(outcome.requeueAfterMs, undefined, "nothing left to write");
    assert.deepEqual(requestLines(h), ["applyStatus MyAppInstance/web", "event RollingOut"]);
    assert.match(h.cluster.instance("web")?.status?.message ?? "", /1\/2 replicas updated, 2\/2 ready/);
  });

  it("paces on the monotonic clock and stamps conditions with the wall clock", async () => {
    const h = await runningInstance();
    newImage(h);
    await h.run();
    h.cluster.reset();

    // WHEN the wall clock is stepped an hour forward (NTP, `date -s`) 1 s into the interval
    await h.advance(1000);
    h.clock.jumpWall(3_600_000);
    h.cluster.progress("Deployment", "web", { updated: 1, ready: 2, replicas: 3 });
    // THEN the counts still wait for the rest of the interval: it is a duration, the step did not shorten it
    assert.equal((await h.run()).requeueAfterMs, 4000);
    assert.deepEqual(requestLines(h), []);

    // and the condition the end of the rollout moves carries the time of day, step included
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    const ready = findCondition(h.cluster.instance("web")?.status?.conditions, "Ready");
    assert.equal(ready?.status, "True");
    assert.equal(ready?.lastTransitionTime, new Date(h.clock.wallTimeMs()).toISOString().replace(/\.\d{3}Z$/, "Z"));
  });

  it("never delays a change of condition: a rollout that fails is Degraded at once", async () => {
    const h = await runningInstance();
    newImage(h);
    await h.run();
    h.cluster.reset();
    await h.advance(100);
    h.cluster.edit("apps/v1", "Deployment", "web", (o) => {
      const status = o["status"] as Record<string, unknown>;
      status["conditions"] = [
        { type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded", message: "too slow" },
      ];
    });
    await h.run();
    assert.equal(h.cluster.instance("web")?.status?.phase, "Degraded");
  });
});

describe("progressOnly", () => {
  const base = {
    observedGeneration: 2,
    phase: "Progressing" as const,
    replicas: 2,
    readyReplicas: 2,
    image: "nginx:1.27",
    message: "rolling out nginx:1.28: 0/2 replicas updated, 2/2 ready",
    conditions: [
      {
        type: "Ready",
        status: "False" as const,
        reason: "RollingOut",
        message: "rolling out nginx:1.28: 0/2 replicas updated, 2/2 ready",
        observedGeneration: 2,
        lastTransitionTime: "2030-01-01T00:00:00Z",
      },
    ],
  };
  const moved = {
    ...base,
    replicas: 3,
    message: "rolling out nginx:1.28: 1/2 replicas updated, 2/2 ready",
    conditions: [{ ...base.conditions[0]!, message: "rolling out nginx:1.28: 1/2 replicas updated, 2/2 ready" }],
  };

  it("is true when counts and the messages quoting them are all that moved", () => {
    assert.equal(progressOnly(base, moved), true);
  });

  it("is false for news: a first status, a generation, a phase, a condition's reason, Ready=True", () => {
    assert.equal(progressOnly(undefined, moved), false);
    assert.equal(progressOnly(base, { ...moved, observedGeneration: 3 }), false);
    assert.equal(progressOnly(base, { ...moved, phase: "Degraded" }), false);
    assert.equal(progressOnly(base, { ...moved, conditions: [{ ...moved.conditions[0]!, reason: "Scaling" }] }), false);
    assert.equal(
      progressOnly(
        { ...base, conditions: [{ ...base.conditions[0]!, status: "True" }] },
        { ...moved, conditions: [{ ...moved.conditions[0]!, status: "True" }] },
      ),
      false,
    );
  });
});

describe("StatusPacer", () => {
  it("holds a key for its interval and forgets writes older than that", () => {
    const pacer = new StatusPacer(5000);
    assert.equal(pacer.waitFor("a/web", 0), 0);
    pacer.wrote("a/web", 1000, {}, "7");
    assert.equal(pacer.waitFor("a/web", 2000), 4000);
    assert.equal(pacer.waitFor("a/web", 6000), 0);
    pacer.wrote("a/db", 7000, {}, "8");
    assert.equal(pacer.size, 1, "a/web's write no longer delays anything");
  });

  it("stretches the interval with the instances at work, so a fleet's progress shares a budget per second", () => {
    const pacer = new StatusPacer(5000, { fleetWritesPerSecond: 10 });
    const at = "2030-01-01T00:00:00Z";
    const working = {
      conditions: [
        { type: "Ready", status: "False" as const, reason: "RollingOut", message: "", lastTransitionTime: at },
      ],
    };
    const ready = {
      conditions: [
        { type: "Ready", status: "True" as const, reason: "Available", message: "", lastTransitionTime: at },
      ],
    };
    // GIVEN 20 instances at work: 20 ÷ 10 per s is 2 s, under the base interval
    for (let i = 0; i < 20; i++) pacer.wrote(`a/app-${i}`, 0, working, "1");
    assert.equal(pacer.intervalMs, 5000);
    // WHEN a fleet of 200 is rolled out at once THEN each one's progress waits 20 s (10 writes per s in all)
    for (let i = 20; i < 200; i++) pacer.wrote(`a/app-${i}`, 1000, working, "1");
    assert.equal(pacer.workingCount, 200);
    assert.equal(pacer.intervalMs, 20_000);
    assert.equal(pacer.waitFor("a/app-20", 6000), 15_000);
    // and an end of rollout (Ready) or a deleted instance leaves the budget to the others
    for (let i = 0; i < 100; i++) pacer.wrote(`a/app-${i}`, 7000, ready, "2");
    for (let i = 100; i < 150; i++) pacer.forget(`a/app-${i}`);
    assert.equal(pacer.workingCount, 50);
    assert.equal(pacer.intervalMs, 5000);
    assert.equal(pacer.waitFor("a/app-120", 8000), 0, "forgotten: written at once");
    // and an instance that said nothing for 5 minutes no longer counts as at work
    pacer.wrote("a/late", 1000 + 5 * 60_000, working, "3");
    assert.equal(pacer.workingCount, 1, "only the instance written within the horizon");
  });

  it("refuses a budget that is not a positive rate", () => {
    assert.throws(() => new StatusPacer(5000, { fleetWritesPerSecond: 0 }), /positive number of writes per second/);
  });

  it("gives back the status it wrote only while the instance read is still the version it was written over", () => {
    const pacer = new StatusPacer(5000);
    const written = { phase: "Progressing" as const, observedGeneration: 2 };
    pacer.wrote("a/web", 1000, written, "41");
    // the cache has not delivered the write yet: it still shows version 41
    assert.deepEqual(pacer.writtenOver("a/web", "41"), written);
    // it has (or something else changed the instance): the cache's status is the one to start from
    assert.equal(pacer.writtenOver("a/web", "42"), undefined);
    assert.equal(pacer.writtenOver("a/web", undefined), undefined);
    assert.equal(pacer.writtenOver("a/db", "41"), undefined);
  });
});
