import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  ServerError,
  TooManyRequestsError,
  TransportError,
} from "../../../kube/errors.ts";
import { PermanentError, TransientError } from "../../../operator/runtime/errors.ts";
import { isOutageFailure, OutageRecovery, type OutageRecoveryOptions } from "../../../operator/runtime/recovery.ts";
import { FakeClock } from "./fake-clock.ts";

const unavailable = () => new ServerError(503, "the server is currently unable to handle the request");
/** As the reconciler wraps what it does not classify itself. */
const wrapped = (cause: Error) => new TransientError(`reconcile ns/a: ${cause.message}`, { cause });

/** A policy on a fake clock whose probe answers what `apiserver.ready` says, recording releases and probes. */
function setup(options: Partial<OutageRecoveryOptions> = {}) {
  const clock = new FakeClock();
  const start = clock.monotonicMs();
  const apiserver = { ready: false };
  const released: { key: string; at: number }[] = [];
  const probes: number[] = [];
  const recovery = new OutageRecovery({
    clock,
    probe: async () => {
      probes.push(clock.monotonicMs() - start);
      return apiserver.ready;
    },
    release: (key) => released.push({ key, at: clock.monotonicMs() - start }),
    ...options,
  });
  return { clock, recovery, apiserver, released, probes, start };
}

describe("isOutageFailure", () => {
  it("is true for transport errors, 5xx and 429, also deep in the cause chain", () => {
    assert.ok(isOutageFailure(new TransportError(0, "connect ECONNREFUSED")));
    assert.ok(isOutageFailure(unavailable()));
    assert.ok(isOutageFailure(new TooManyRequestsError(429, "slow down")));
    assert.ok(isOutageFailure(wrapped(wrapped(unavailable()))));
  });

  it("is false for failures of the key's own: rejections, conflicts, authorization, a chart source, a bug", () => {
    assert.ok(!isOutageFailure(new InvalidError(422, "spec.replicas: must be >= 0")));
    assert.ok(!isOutageFailure(new ConflictError(409, "the object has been modified")));
    assert.ok(!isOutageFailure(new ForbiddenError(403, 'User "x" cannot patch resource "deployments"')));
    assert.ok(!isOutageFailure(new PermanentError("invalid spec")));
    assert.ok(!isOutageFailure(new TransientError("chart source https://charts.example.com: 502")));
    assert.ok(!isOutageFailure(new TypeError("undefined is not a function")));
    assert.ok(!isOutageFailure("a string"));
  });
});

describe("OutageRecovery", () => {
  it("retries the keys that failed during an outage within one probe interval of its end, in failure order", async () => {
    // GIVEN three keys failing while the apiserver is down (503 and refused connections)
    const { clock, recovery, apiserver, released } = setup();
    recovery.failed("ns/b", wrapped(unavailable()));
    recovery.failed("ns/a", new TransportError(0, "connect ECONNREFUSED"));
    recovery.failed("ns/c", wrapped(new TooManyRequestsError(429, "throttled")));
    // WHEN it stays down for three minutes
    await clock.advance(180_000);
    assert.deepEqual(released, [], "nothing is released while the apiserver is away");
    // AND comes back
    apiserver.ready = true;
    await clock.advance(2_000);
    // THEN all three are retried at the next probe, oldest failure first, and nothing waits any more
    assert.deepEqual(released, [
      { key: "ns/b", at: 182_000 },
      { key: "ns/a", at: 182_000 },
      { key: "ns/c", at: 182_000 },
    ]);
    assert.deepEqual(recovery.waitingKeys, []);
    assert.equal(recovery.releases, 1);
  });

  it("keeps the backoff of keys that failed for their own reasons, permanently, or have recovered since", async () => {
    const { clock, recovery, apiserver, released } = setup();
    recovery.failed("ns/outage", unavailable());
    // a chart source that is down: transient, but not the apiserver's doing
    recovery.failed("ns/chart", new TransientError("chart source https://charts.example.com: 502"));
    // failed for the outage, then permanently (the controller forgets it)
    recovery.failed("ns/degraded", unavailable());
    recovery.forget("ns/degraded");
    // failed for the outage, then for a conflict: its own retry is 100 ms away
    recovery.failed("ns/conflict", unavailable());
    recovery.failed("ns/conflict", new ConflictError(409, "the object has been modified"));
    // failed for the outage, then succeeded after a change
    recovery.failed("ns/done", unavailable());
    recovery.succeeded("ns/done");
    await clock.advance(10_000);
    apiserver.ready = true;
    await clock.advance(2_000);
    assert.deepEqual(
      released.map((r) => r.key),
      ["ns/outage"],
    );
  });

  it("releases nothing while the apiserver stays ready: 5xx of a broken webhook keep their backoff", async () => {
    // GIVEN a key failing with 500 from an admission webhook, on an apiserver whose /readyz is fine
    const { clock, recovery, apiserver, released, probes } = setup();
    apiserver.ready = true;
    recovery.failed("ns/a", wrapped(new ServerError(500, 'failed calling webhook "policy.example.com"')));
    // WHEN a minute passes, the key failing again now and then
    for (let i = 0; i < 6; i++) {
      await clock.advance(10_000);
      recovery.failed("ns/a", wrapped(new ServerError(500, 'failed calling webhook "policy.example.com"')));
    }
    // THEN it was never released (no hot loop), although the probe looked every 2 s
    assert.deepEqual(released, []);
    assert.ok(probes.length >= 29, `probed every 2 s (${probes.length})`);
  });

  it("probes only while keys wait on an outage, one probe at a time", async () => {
    // GIVEN a probe that hangs for 12 s (no answer), timed out after 5 s
    const { clock, released } = setup();
    let inFlight = 0;
    let most = 0;
    const calls: number[] = [];
    const hanging = new OutageRecovery({
      clock,
      probeTimeoutMs: 5_000,
      probe: () => {
        calls.push(clock.monotonicMs());
        most = Math.max(most, ++inFlight);
        return new Promise((resolve) =>
          clock.setTimeout(() => {
            inFlight--;
            resolve(true);
          }, 12_000),
        );
      },
      release: (key) => released.push({ key, at: clock.monotonicMs() }),
    });
    // no failure: no probe
    await clock.advance(60_000);
    assert.equal(calls.length, 0);
    assert.equal(clock.pending, 0, "nothing is scheduled while no key waits");
    // WHEN a key fails for an outage
    hanging.failed("ns/a", unavailable());
    await clock.advance(14_000);
    // THEN the probe runs every 2 s after the previous one ended: a timed-out probe ends after 5 s
    assert.deepEqual(
      calls.map((at) => at - calls[0]!),
      [0, 7_000],
    );
    assert.deepEqual(released, [], "a timed-out probe counts as not ready");
    // WHEN the key succeeds: the probing stops
    hanging.succeeded("ns/a");
    await clock.advance(60_000);
    assert.equal(calls.length, 2, "no probe once no key waits");
    assert.ok(most <= 2, `at most the hanging probe and one more in flight (${most})`);
  });

  it("paces a release: the burst at once, then perSecond a second", async () => {
    // GIVEN 20 keys failed during the outage
    const { clock, recovery, apiserver, released } = setup({ burst: 4, perSecond: 10 });
    const keys = Array.from({ length: 20 }, (_, i) => `ns/k${String(i).padStart(2, "0")}`);
    for (const key of keys) recovery.failed(key, unavailable());
    await clock.advance(4_000);
    // WHEN the apiserver comes back
    apiserver.ready = true;
    await clock.advance(2_000);
    // THEN 4 go at once ...
    assert.equal(released.length, 4);
    // ... and the other 16 one every 100 ms
    await clock.advance(1_000);
    assert.equal(released.length, 14);
    await clock.advance(1_000);
    assert.deepEqual(
      released.map((r) => r.key),
      keys,
    );
    const at = released.map((r) => r.at - released[0]!.at);
    assert.deepEqual(at.slice(0, 4), [0, 0, 0, 0]);
    assert.deepEqual(
      at.slice(4),
      Array.from({ length: 16 }, (_, i) => (i + 1) * 100),
    );
    assert.equal(clock.pending, 0, "nothing left scheduled");
  });

  it("a key that succeeds or fails again while its release is paced is not released twice", async () => {
    const { clock, recovery, apiserver, released } = setup({ burst: 1, perSecond: 1 });
    for (const key of ["ns/a", "ns/b", "ns/c"]) recovery.failed(key, unavailable());
    await clock.advance(2_000);
    apiserver.ready = true;
    await clock.advance(2_000);
    assert.deepEqual(
      released.map((r) => r.key),
      ["ns/a"],
    );
    // an event reconciled ns/b meanwhile, and it succeeded
    recovery.succeeded("ns/b");
    await clock.advance(5_000);
    assert.deepEqual(
      released.map((r) => r.key),
      ["ns/a", "ns/c"],
    );
  });

  it("holds off after a release that came too early (a flapping apiserver), and resets on a success", async () => {
    // GIVEN an apiserver that comes back only briefly, again and again
    const { clock, recovery, apiserver, released } = setup({ maxHoldOffMs: 16_000 });
    const flap = async () => {
      apiserver.ready = true;
      await clock.advance(2_000);
      // the released key fails at once: the apiserver is away again
      recovery.failed("ns/a", unavailable());
      apiserver.ready = false;
    };
    recovery.failed("ns/a", unavailable());
    await clock.advance(2_000);
    const releasesAt: number[] = [];
    for (let i = 0; i < 12; i++) {
      const before = released.length;
      await flap();
      await clock.advance(2_000);
      if (released.length > before) releasesAt.push(released.at(-1)!.at);
    }
    // THEN releases come with growing gaps (2, 4, 8, 16 s of hold-off), not at every flap
    const gaps = releasesAt.slice(1).map((t, i) => t - releasesAt[i]!);
    assert.ok(releasesAt.length < 12, `not released at every flap (${releasesAt.length} of 12)`);
    assert.ok(
      gaps.every((gap, i) => i === 0 || gap >= gaps[i - 1]!),
      `gaps grow: ${JSON.stringify(gaps)}`,
    );
    assert.ok(gaps.at(-1)! >= 16_000, `the hold-off reached its cap: ${JSON.stringify(gaps)}`);
    // WHEN a key succeeds (the apiserver is really back), the next outage is recovered from at once again
    recovery.succeeded("ns/a");
    recovery.failed("ns/b", unavailable());
    await clock.advance(2_000);
    apiserver.ready = true;
    const before = released.length;
    await clock.advance(2_000);
    assert.equal(released.length, before + 1);
    assert.equal(released.at(-1)!.key, "ns/b");
  });

  it("stop cancels the probe and a paced release", async () => {
    const { clock, recovery, apiserver, released } = setup({ burst: 1, perSecond: 1 });
    for (const key of ["ns/a", "ns/b", "ns/c"]) recovery.failed(key, unavailable());
    await clock.advance(2_000);
    apiserver.ready = true;
    await clock.advance(2_000);
    recovery.stop();
    await clock.advance(10_000);
    assert.equal(released.length, 1);
    assert.equal(clock.pending, 0);
    recovery.failed("ns/d", unavailable());
    assert.equal(clock.pending, 0, "no probe after stop");
  });

  it("refuses nonsensical settings, naming the field", () => {
    const base = { probe: async () => true, release: () => undefined };
    assert.throws(() => new OutageRecovery({ ...base, burst: 0 }), /burst must be an integer >= 1/);
    assert.throws(() => new OutageRecovery({ ...base, perSecond: 0 }), /perSecond must be > 0/);
    assert.throws(() => new OutageRecovery({ ...base, probeIntervalMs: -1 }), /probeIntervalMs must be > 0/);
  });
});
