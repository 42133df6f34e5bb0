import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ItemExponentialRateLimiter } from "../../../operator/runtime/rate-limiter.ts";
import { WorkQueue, type QueueMetrics } from "../../../operator/runtime/workqueue.ts";
import { parseObjectKey } from "../../../kube/object-key.ts";
import { FakeClock, settle } from "./fake-clock.ts";

function recordingMetrics() {
  const seen = { added: 0, retried: 0, depth: [] as string[], queued: [] as number[], worked: [] as number[] };
  const metrics: QueueMetrics = {
    added: () => void seen.added++,
    retried: () => void seen.retried++,
    depth: (waiting) => void seen.depth.push(`${waiting.normal} normal, ${waiting.low} low`),
    queued: (s) => void seen.queued.push(s),
    worked: (s) => void seen.worked.push(s),
  };
  return { seen, metrics };
}

/** Resolves with the key if `get` resolves before the pending microtasks run out, else "pending". */
async function poll(promise: Promise<string | undefined>): Promise<string | undefined | "pending"> {
  let value: string | undefined | "pending" = "pending";
  void promise.then((v) => (value = v));
  await settle();
  return value;
}

describe("WorkQueue", () => {
  it("is fair across namespaces: a flood in one waits behind its own keys, not every tenant behind it", async () => {
    // GIVEN a tenant who queued a thousand instances, then two other tenants one each
    const queue = new WorkQueue({ clock: new FakeClock() });
    for (let i = 0; i < 1000; i++) queue.add(`flood/i-${i}`);
    queue.add("shop/web");
    queue.add("bank/ledger");
    // THEN the others are handed out within the first round, and each namespace keeps its own order
    const firstFour = [await queue.get(), await queue.get(), await queue.get(), await queue.get()];
    assert.deepEqual(firstFour, ["flood/i-0", "shop/web", "bank/ledger", "flood/i-1"]);
    assert.equal(queue.length, 998);
  });

  it("shares the workers' time, not turns: a namespace whose reconciles cost four times more gets a quarter of the turns", async () => {
    // GIVEN a flood whose reconciles take 400 ms each and a tenant whose take 100 ms, both with plenty queued
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    for (let i = 0; i < 50; i++) queue.add(`flood/i-${i}`);
    for (let i = 0; i < 50; i++) queue.add(`shop/web-${i}`);
    // WHEN one worker runs them for 8 s
    const spent = new Map<string, number>();
    const end = clock.monotonicMs() + 8_000;
    while (clock.monotonicMs() < end) {
      const key = (await queue.get())!;
      const cost = key.startsWith("flood/") ? 400 : 100;
      await clock.advance(cost);
      queue.done(key);
      const namespace = parseObjectKey(key).namespace;
      spent.set(namespace, (spent.get(namespace) ?? 0) + cost);
    }
    // THEN each had half the time (within one reconcile), where turn by turn the flood would have had 80 %
    assert.ok(Math.abs(spent.get("flood")! - spent.get("shop")!) <= 400, JSON.stringify([...spent]));
  });

  it("idling banks no credit: a tenant back after a pause shares from then on, it does not get the workers alone", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    const run = async () => {
      const key = (await queue.get())!;
      await clock.advance(100);
      queue.done(key);
      return parseObjectKey(key).namespace;
    };
    // GIVEN a busy tenant that worked alone for 10 s
    for (let i = 0; i < 200; i++) queue.add(`busy/i-${i}`);
    for (let i = 0; i < 100; i++) await run();
    // WHEN another tenant comes back with many keys
    for (let i = 0; i < 20; i++) queue.add(`back/i-${i}`);
    // THEN they alternate at once
    const next = [];
    for (let i = 0; i < 6; i++) next.push(await run());
    assert.deepEqual(next.filter((namespace) => namespace === "back").length, 3, next.join(" "));
  });

  it("keeps the worker time of the namespaces seen lately, not of every namespace ever seen", async () => {
    // GIVEN tenants that come, have their instances reconciled and go, one after another, a thousand of them
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    const run = async () => {
      const key = (await queue.get())!;
      await clock.advance(100);
      queue.done(key);
    };
    for (let tenant = 0; tenant < 1000; tenant++) {
      for (let i = 0; i < 3; i++) queue.add(`churn-${tenant}/i-${i}`);
      for (let i = 0; i < 3; i++) await run();
    }
    // THEN the queue keeps the last ones' time only (each ends ahead of the clock, until the next one passes it)
    assert.ok(queue.groupsKept <= 2, `groups kept: ${queue.groupsKept}`);
  });

  it("an idle namespace still ahead of the clock keeps its debt: back at once, it waits its turn", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    const run = async () => {
      const key = (await queue.get())!;
      await clock.advance(key.startsWith("heavy/") ? 1000 : 100);
      queue.done(key);
      return parseObjectKey(key).namespace;
    };
    // GIVEN a tenant whose one reconcile took 1 s, beside one whose take 100 ms
    for (let i = 0; i < 20; i++) queue.add(`light/i-${i}`);
    queue.add("heavy/a");
    const first = [await run(), await run()];
    assert.deepEqual(first, ["light", "heavy"]);
    // WHEN the heavy one comes back at once with more
    for (let i = 0; i < 5; i++) queue.add(`heavy/b-${i}`);
    // THEN the light one has the next ~9 turns: the heavy one's second of worker time is not forgiven by its pause
    const next = [];
    for (let i = 0; i < 9; i++) next.push(await run());
    assert.deepEqual(new Set(next), new Set(["light"]), next.join(" "));
  });

  it("hands out low-priority keys (a first list, a resync) only while no change waits", async () => {
    // GIVEN a restarted operator's first look at a thousand instances, queued at low priority
    const queue = new WorkQueue({ clock: new FakeClock() });
    for (let i = 0; i < 1000; i++) queue.add(`shop/app-${i}`, "low");
    assert.equal(await queue.get(), "shop/app-0");
    // WHEN a tenant changes one instance, and another's child changes
    queue.add("shop/edited");
    queue.add("bank/ledger");
    // THEN both are handed out next, in arrival order, and then the first look goes on where it was
    assert.deepEqual(
      [await queue.get(), await queue.get(), await queue.get()],
      ["shop/edited", "bank/ledger", "shop/app-1"],
    );
    assert.equal(queue.waitingWith("low"), 998);
    assert.equal(queue.waitingWith("normal"), 0);
  });

  it("a key added at both priorities waits at the higher: a low key that changes goes to the back of the changes", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add("ns/a", "low");
    queue.add("ns/b", "low");
    queue.add("ns/c");
    // WHEN the low key ns/b changes, and the normal key ns/c is also found by a resync
    queue.add("ns/b");
    queue.add("ns/c", "low");
    // THEN ns/c keeps its place, ns/b follows it, ns/a waits for both; three keys in all
    assert.equal(queue.length, 3);
    assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ["ns/c", "ns/b", "ns/a"]);
  });

  it("a key added again while a worker holds it comes back at the priority it was added with, the higher if both", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add("ns/a");
    queue.add("ns/b");
    const held = [await queue.get(), await queue.get()];
    assert.deepEqual(held, ["ns/a", "ns/b"]);
    queue.add("ns/x", "low");
    // WHEN ns/a is found again by a resync while held, and ns/b is found by a resync and then changes
    queue.add("ns/a", "low");
    queue.add("ns/b", "low");
    queue.add("ns/b");
    queue.done("ns/a");
    queue.done("ns/b");
    // THEN ns/b (a change) comes first, then the two low keys in the order they became ready
    assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ["ns/b", "ns/x", "ns/a"]);
  });

  it("is fair across namespaces within the low priority too", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    for (let i = 0; i < 100; i++) queue.add(`flood/i-${i}`, "low");
    queue.add("shop/web", "low");
    assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ["flood/i-0", "shop/web", "flood/i-1"]);
  });

  it("with one namespace (or keys without one) it is plain first in, first out", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    for (const key of ["ns/c", "ns/a", "ns/b"]) queue.add(key);
    assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ["ns/c", "ns/a", "ns/b"]);
  });

  it("deduplicates: a key added twice while queued is handed out once", async () => {
    // GIVEN a queue with a key added twice
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add("ns/a");
    queue.add("ns/a");
    queue.add("ns/b");
    // THEN it holds two keys, in first-add order
    assert.equal(queue.length, 2);
    assert.equal(await queue.get(), "ns/a");
    assert.equal(await queue.get(), "ns/b");
    assert.equal(await poll(queue.get()), "pending");
  });

  it("never hands out a key being processed; an add meanwhile is queued again on done", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add("ns/a");
    const key = await queue.get();
    assert.equal(key, "ns/a");
    // WHEN the key changes while a worker holds it (twice: still one more round)
    queue.add("ns/a");
    queue.add("ns/a");
    // THEN a second worker does not get it
    const second = queue.get();
    assert.equal(await poll(second), "pending");
    // and it comes back exactly once after done
    queue.done("ns/a");
    assert.equal(await second, "ns/a");
    queue.done("ns/a");
    assert.equal(await poll(queue.get()), "pending");
  });

  it("addNow replaces a pending later look: a key waiting on background work is not looked at twice", async () => {
    // GIVEN a key that asked to be looked at again in 30 s (its chart job still runs)
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.addAfter("ns/chart", 30_000);
    // WHEN the job settles and wakes it
    queue.addNow("ns/chart");
    assert.equal(await queue.get(), "ns/chart");
    queue.done("ns/chart");
    // THEN the 30 s look is gone: it would start the job over, and wake again, every 30 s for ever
    await clock.advance(30_000);
    assert.equal(await poll(queue.get()), "pending");
  });

  it("wakes a waiting worker when a key arrives", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    const waiting = queue.get();
    assert.equal(await poll(waiting), "pending");
    queue.add("ns/a");
    assert.equal(await waiting, "ns/a");
  });

  it("an add now through addAfter(0) cancels a pending later add: the key is not handed out twice", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.addAfter("ns/a", 300_000);
    queue.addAfter("ns/a", 0);
    assert.equal(await queue.get(), "ns/a");
    queue.done("ns/a");
    assert.equal(clock.pending, 0, "the later add is gone");
    await clock.advance(600_000);
    assert.equal(queue.length, 0);
  });

  it("adds after a delay, and an earlier delayed add of the same key wins", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.addAfter("ns/a", 1000);
    queue.addAfter("ns/a", 300);
    queue.addAfter("ns/a", 5000);
    await clock.advance(299);
    assert.equal(queue.length, 0);
    await clock.advance(1);
    assert.equal(queue.length, 1);
    assert.equal(await queue.get(), "ns/a");
    queue.done("ns/a");
    // the later timers were dropped, not merely outrun
    await clock.advance(10_000);
    assert.equal(queue.length, 0);
    assert.equal(clock.pending, 0);
  });

  it("retries a failing key with exponential backoff and starts over after forget", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter() });
    const arrivals: number[] = [];
    const start = clock.monotonicMs();
    for (let attempt = 0; attempt < 4; attempt++) {
      queue.addRateLimited("ns/a");
      while (queue.length === 0) {
        const delay = clock.nextDelay();
        assert.ok(delay !== undefined, "a delayed add must be pending");
        await clock.advance(delay);
      }
      assert.equal(await queue.get(), "ns/a");
      arrivals.push(clock.monotonicMs() - start);
      queue.done("ns/a");
    }
    // 5, +10, +20, +40 ms
    assert.deepEqual(arrivals, [5, 15, 35, 75]);
    assert.equal(queue.numRequeues("ns/a"), 4);
    queue.forget("ns/a");
    assert.equal(queue.numRequeues("ns/a"), 0);
    queue.addRateLimited("ns/a");
    assert.equal(clock.nextDelay(), 5);
  });

  it("shutdown stops intake, releases waiting workers and waits for in-flight keys", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.add("ns/a");
    queue.add("ns/b");
    queue.addAfter("ns/c", 1000);
    const held = await queue.get();
    assert.equal(held, "ns/a");

    let drained = false;
    const drain = queue.shutDownWithDrain().then(() => (drained = true));
    // queued and delayed keys are no longer handed out; new adds are ignored
    assert.equal(await queue.get(), undefined);
    queue.add("ns/d");
    assert.equal(queue.length, 1, "ns/b stays queued but is never handed out");
    assert.equal(clock.pending, 0, "the delayed add was cancelled");
    // the drain waits for the key in flight
    await settle();
    assert.equal(drained, false);
    queue.add("ns/a"); // an add of the in-flight key after shutdown must not requeue it
    queue.done("ns/a");
    await drain;
    assert.equal(drained, true);
    assert.equal(await queue.get(), undefined);
  });

  it("resolves a drain at once when nothing is in flight", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    const waiting = queue.get();
    await queue.shutDownWithDrain();
    assert.equal(await waiting, undefined);
  });

  it("reports adds, depth, retries and latencies to its metrics", async () => {
    const clock = new FakeClock();
    const { seen, metrics } = recordingMetrics();
    const queue = new WorkQueue({ clock, metrics });
    queue.add("ns/a");
    queue.add("ns/a"); // deduplicated: not an add
    queue.add("ns/b", "low");
    queue.add("ns/c", "low");
    queue.add("ns/c"); // promoted: not an add
    await clock.advance(250);
    assert.equal(await queue.get(), "ns/a");
    await clock.advance(1500);
    queue.done("ns/a");
    queue.addAfter("ns/a", 10);
    assert.equal(seen.added, 3);
    assert.equal(seen.retried, 1);
    assert.deepEqual(seen.depth, [
      "1 normal, 0 low",
      "1 normal, 1 low",
      "1 normal, 2 low",
      "2 normal, 1 low",
      "1 normal, 1 low",
    ]);
    assert.deepEqual(seen.queued, [0.25]);
    assert.deepEqual(seen.worked, [1.5]);
  });

  it("promotes and drains a fleet: every key of 50,000 waiting at low changes, then all are handed out in order", async () => {
    // GIVEN a restarted operator's first look at 50,000 instances of one namespace, queued at low priority
    const queue = new WorkQueue({ clock: new FakeClock() });
    const count = 50_000;
    for (let i = 0; i < count; i++) queue.add(`tenant/i-${i}`, "low");
    // WHEN each one's child changes (a rollout), newest first, and the workers take them all
    for (let i = count - 1; i >= 0; i--) queue.add(`tenant/i-${i}`);
    const handed: string[] = [];
    for (let i = 0; i < count; i++) {
      const key = (await queue.get())!;
      handed.push(key);
      queue.done(key);
    }
    // THEN in the order they changed (how long it takes, linear since arrays gave way to sets, is measured by
    // `npm run bench -- hostile-input`)
    assert.deepEqual(
      handed,
      Array.from({ length: count }, (_, i) => `tenant/i-${count - 1 - i}`),
    );
    assert.equal(queue.length, 0);
  });

  it("keeps arrival order, dedupe and priorities exactly through promotions, re-adds and holds (against a model)", async () => {
    // A seeded walk of adds at both priorities, takes and dones over a few keys of one namespace, each step checked
    // against the rules written out plainly: one FIFO per priority, normal first, a low key added at normal moves
    // to the back of the normal keys, a key is queued once and never handed out while held.
    const queue = new WorkQueue({ clock: new FakeClock() });
    const model = { normal: [] as string[], low: [] as string[], dirty: new Map<string, "normal" | "low">() };
    const held = new Set<string>();
    const enqueue = (key: string) => model[model.dirty.get(key)!].push(key);
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let step = 0; step < 20_000; step++) {
      const key = `ns/k${random(12)}`;
      const action = random(4);
      if (action < 2) {
        const priority = action === 0 ? "normal" : "low";
        queue.add(key, priority);
        const was = model.dirty.get(key);
        if (was === undefined) {
          model.dirty.set(key, priority);
          if (!held.has(key)) enqueue(key);
        } else if (was === "low" && priority === "normal") {
          model.dirty.set(key, "normal");
          if (!held.has(key)) {
            model.low.splice(model.low.indexOf(key), 1);
            model.normal.push(key);
          }
        }
      } else if (action === 2 && queue.length > 0) {
        const expected = model.normal.shift() ?? model.low.shift();
        assert.equal(await queue.get(), expected, `step ${step}`);
        model.dirty.delete(expected!);
        held.add(expected!);
      } else if (action === 3 && held.size > 0) {
        const done = [...held][random(held.size)]!;
        queue.done(done);
        held.delete(done);
        if (model.dirty.has(done)) enqueue(done);
      }
      assert.equal(queue.waitingWith("normal"), model.normal.length, `step ${step}`);
      assert.equal(queue.waitingWith("low"), model.low.length, `step ${step}`);
    }
  });
});
