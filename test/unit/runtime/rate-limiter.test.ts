import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  GroupedBucketRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
} from "../../../operator/runtime/rate-limiter.ts";
import { FakeClock } from "./fake-clock.ts";

describe("ItemExponentialRateLimiter", () => {
  it("doubles from 5 ms per failure of a key and caps at 1000 s", () => {
    const limiter = new ItemExponentialRateLimiter();
    const delays = Array.from({ length: 22 }, () => limiter.when("ns/a"));
    assert.deepEqual(delays.slice(0, 6), [5, 10, 20, 40, 80, 160]);
    // 5 ms · 2^17 = 655.36 s is the last step below the cap; 2^18 would be 1310.72 s.
    assert.equal(delays[17], 655_360);
    assert.deepEqual(delays.slice(18), [1_000_000, 1_000_000, 1_000_000, 1_000_000]);
    assert.equal(limiter.numRequeues("ns/a"), 22);
  });

  it("keeps keys independent and starts over after forget", () => {
    const limiter = new ItemExponentialRateLimiter();
    limiter.when("ns/a");
    limiter.when("ns/a");
    assert.equal(limiter.when("ns/b"), 5);
    limiter.forget("ns/a");
    assert.equal(limiter.numRequeues("ns/a"), 0);
    assert.equal(limiter.when("ns/a"), 5);
  });

  it("never overflows to a non-finite delay", () => {
    const limiter = new ItemExponentialRateLimiter();
    for (let i = 0; i < 2000; i++) limiter.when("k");
    assert.equal(limiter.when("k"), 1_000_000);
  });
});

describe("BucketRateLimiter", () => {
  it("lets a burst of 100 through at once, then spaces retries at 10 qps", () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter(clock);
    const burst = Array.from({ length: 100 }, (_, i) => bucket.when(`k${i}`));
    assert.ok(burst.every((delay) => delay === 0));
    assert.deepEqual([bucket.when("x"), bucket.when("y"), bucket.when("z")], [100, 200, 300]);
  });

  it("refills with time, up to the burst size", async () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter(clock, { qps: 10, burst: 2 });
    assert.deepEqual([bucket.when("a"), bucket.when("b"), bucket.when("c")], [0, 0, 100]);
    await clock.advance(10_000); // refills to 2, not to 100
    assert.deepEqual([bucket.when("d"), bucket.when("e"), bucket.when("f")], [0, 0, 100]);
  });

  it("rejects settings that could never hand out a token", () => {
    assert.throws(() => new BucketRateLimiter(new FakeClock(), { qps: 0 }), /qps > 0/);
  });
});

describe("GroupedBucketRateLimiter", () => {
  it("gives each namespace its own bucket: one tenant's failures never delay another's retry", () => {
    const clock = new FakeClock();
    const limiter = new GroupedBucketRateLimiter(clock);
    // 2,000 failing instances of one namespace, 15 fast retries each: 30,000 reservations of team-a's bucket
    let last = 0;
    for (let retry = 0; retry < 15; retry++) for (let i = 0; i < 2000; i++) last = limiter.when(`team-a/app-${i}`);
    assert.ok(last > 2_900_000, `team-a waits out its own debt (${last} ms)`);
    assert.equal(limiter.when("team-b/web"), 0);
    assert.equal(limiter.when("team-b/web"), 0);
  });

  it("drops buckets that have refilled, so memory follows the namespaces failing now", async () => {
    const clock = new FakeClock();
    const limiter = new GroupedBucketRateLimiter(clock, { qps: 10, burst: 2 });
    for (let i = 0; i < 500; i++) limiter.when(`ns-${i}/a`);
    assert.equal(limiter.groups, 500);
    await clock.advance(1_000);
    for (let i = 0; i < 524; i++) limiter.when("busy/a");
    assert.equal(limiter.groups, 1);
  });

  it("rejects settings that could never hand out a token, at once", () => {
    assert.throws(() => new GroupedBucketRateLimiter(new FakeClock(), { burst: 0 }), /burst >= 1/);
  });
});

describe("MaxOfRateLimiter / defaultControllerRateLimiter", () => {
  it("takes the larger delay and records the failure in every limiter", () => {
    const clock = new FakeClock();
    const limiter = new MaxOfRateLimiter(new ItemExponentialRateLimiter(), new BucketRateLimiter(clock, { burst: 1 }));
    assert.equal(limiter.when("a"), 5); // bucket 0, per-key 5
    assert.equal(limiter.when("b"), 100); // bucket empty: 100 ms beats 5 ms
    assert.equal(limiter.numRequeues("a"), 1);
    limiter.forget("a");
    assert.equal(limiter.numRequeues("a"), 0);
  });

  it("is client-go's default: per-key 5 ms doubling, shared burst of 100", () => {
    const limiter = defaultControllerRateLimiter(new FakeClock());
    assert.deepEqual([limiter.when("a"), limiter.when("a"), limiter.when("a")], [5, 10, 20]);
  });
});
