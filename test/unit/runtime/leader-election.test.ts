import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ApiError, ForbiddenError, NotFoundError } from "../../../kube/errors.ts";
import { microTime } from "../../../kube/micro-time.ts";
import {
  LeaderElector,
  leadershipLostMessage,
  type LeadershipEnd,
  type LeadershipLoss,
  type LeaderElectionOptions,
} from "../../../operator/runtime/leader-election.ts";
import { OperatorMetrics } from "../../../operator/runtime/metrics.ts";
import { captureLogger } from "./capture-logger.ts";
import { FakeClock } from "./fake-clock.ts";
import { FakeLeaseStore } from "./fake-lease.ts";

interface Candidate {
  elector: LeaderElector;
  lease: ReturnType<FakeLeaseStore["client"]>;
  events: string[];
}

function candidate(
  store: FakeLeaseStore,
  clock: FakeClock,
  identity: string,
  options: Partial<LeaderElectionOptions> = {},
): Candidate {
  const lease = store.client(identity);
  const events: string[] = [];
  const elector = new LeaderElector({
    lease,
    identity,
    name: "myapp-operator",
    logger: captureLogger().logger,
    clock,
    random: () => 0,
    onStartedLeading: () => events.push(`started@${clock.monotonicMs()}`),
    onStoppedLeading: (reason: LeadershipEnd) => events.push(`stopped:${reason}@${clock.monotonicMs()}`),
    ...options,
  });
  return { elector, lease, events };
}

/** Advances in small steps, failing if two candidates ever lead at once. */
async function run(clock: FakeClock, ms: number, candidates: Candidate[]): Promise<void> {
  for (let t = 0; t < ms; t += 100) {
    await clock.advance(Math.min(100, ms - t));
    const leaders = candidates.filter((c) => c.elector.isLeader()).length;
    assert.ok(leaders <= 1, `two leaders at ${clock.monotonicMs()}`);
  }
}

describe("LeaderElector", () => {
  it("creates the lease and leads when nobody holds it", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const metrics = new OperatorMetrics();
    const a = candidate(store, clock, "a", { metrics });
    a.elector.start();
    await clock.advance(0);
    assert.equal(a.elector.isLeader(), true);
    assert.deepEqual(a.events, [`started@${clock.monotonicMs()}`]);
    assert.deepEqual(store.current?.record, {
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      acquireTime: microTime(clock.wallTimeMs()),
      renewTime: microTime(clock.wallTimeMs()),
      leaseTransitions: 0,
    });
    assert.match(await metrics.registry.metrics(), /leader_election_master_status\{name="myapp-operator"\} 1/);
    await a.elector.stop();
  });

  it("renews every retryPeriod, keeping acquireTime", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    const acquiredAt = clock.wallTimeMs();
    a.elector.start();
    await run(clock, 10_000, [a]);
    const renewals = store.writes.filter((w) => w.by === "a");
    assert.equal(renewals.length, 6, "create at 0, renewals at 2, 4, 6, 8, 10 s");
    assert.equal(store.current?.record.acquireTime, microTime(acquiredAt));
    assert.equal(store.current?.record.renewTime, microTime(clock.wallTimeMs()));
    await a.elector.stop();
  });

  it("keeps a standby waiting while the leader renews", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    const b = candidate(store, clock, "b");
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await run(clock, 120_000, [a, b]);
    assert.equal(b.elector.isLeader(), false);
    assert.equal(b.elector.observedLeader(), "a");
    assert.equal(store.writes.filter((w) => w.by === "b").length, 0, "a standby never writes a held lease");
    await a.elector.stop();
    await b.elector.stop();
  });

  it("lets a standby take over within the lease duration after the leader dies without releasing", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    const b = candidate(store, clock, "b");
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await run(clock, 30_000, [a, b]);
    // WHEN the leader is killed (SIGKILL: no release, no more renewals)
    const lastRenewal = clock.monotonicMs();
    await a.elector.stop({ release: false });
    await run(clock, 14_000, [a, b]);
    assert.equal(b.elector.isLeader(), false, "not before the lease duration has passed");
    await run(clock, 15_000 + 2 * 2_000 - 14_000, [a, b]);
    // THEN b leads no later than leaseDuration + one retry after the last renewal
    assert.equal(b.elector.isLeader(), true);
    const takeover = Number(b.events[0]?.split("@")[1]) - lastRenewal;
    assert.ok(takeover >= 15_000 && takeover <= 17_000, `took over after ${takeover} ms`);
    assert.equal(store.current?.record.holderIdentity, "b");
    assert.equal(store.current?.record.leaseTransitions, 1);
    await b.elector.stop();
  });

  it("releases the lease on stop so a standby takes over within one retry period", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    const b = candidate(store, clock, "b");
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await run(clock, 5_000, [a, b]);
    const stoppedAt = clock.monotonicMs();
    await a.elector.stop();
    assert.deepEqual(a.events.at(-1), `stopped:released@${stoppedAt}`);
    assert.equal(store.current?.record.holderIdentity, "");
    assert.equal(store.current?.record.leaseDurationSeconds, 1);
    await run(clock, 2_000, [a, b]);
    assert.equal(b.elector.isLeader(), true);
    await b.elector.stop();
  });

  it("steps down when it cannot renew for renewDeadline, before a standby may take over", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    const b = candidate(store, clock, "b");
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await run(clock, 10_000, [a, b]);
    const lastRenewal = clock.monotonicMs();
    a.lease.down = true; // partitioned from the apiserver
    await run(clock, 30_000, [a, b]);
    const lost = a.events.find((e) => e.startsWith("stopped:lost"));
    assert.ok(lost, `a stepped down (events: ${a.events.join(", ")})`);
    assert.equal(Number(lost.split("@")[1]) - lastRenewal, 10_000);
    assert.equal(b.elector.isLeader(), true);
    await a.elector.stop();
    await b.elector.stop();
  });

  it("steps down when a renewal hangs past the deadline", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    a.elector.start();
    await run(clock, 4_000, [a]);
    const hang = new Promise<never>(() => {});
    a.lease.get = () => hang;
    await run(clock, 12_000, [a]);
    assert.ok(
      a.events.some((e) => e.startsWith("stopped:lost")),
      a.events.join(", "),
    );
  });

  it("ignores a wall-clock jump: a standby never takes a lease its leader keeps renewing", async () => {
    // GIVEN a leader and a standby
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    const b = candidate(store, clock, "b");
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await run(clock, 10_000, [a, b]);
    // WHEN the wall clock steps an hour forward (NTP, `date -s`, a resumed VM) and later two hours back
    clock.jumpWall(3_600_000);
    await run(clock, 30_000, [a, b]);
    clock.jumpWall(-7_200_000);
    await run(clock, 30_000, [a, b]);
    // THEN leadership did not move and the standby never wrote; the Lease's timestamps follow the wall clock
    assert.equal(a.elector.isLeader(), true);
    assert.equal(b.elector.isLeader(), false);
    assert.equal(store.writes.filter((w) => w.by === "b").length, 0);
    assert.equal(store.current?.record.renewTime, microTime(clock.wallTimeMs()));
    // and after the leader dies, the takeover still waits the full lease duration of real (monotonic) time
    const lastRenewal = clock.monotonicMs();
    await a.elector.stop({ release: false });
    clock.jumpWall(3_600_000);
    await run(clock, 14_000, [a, b]);
    assert.equal(b.elector.isLeader(), false, "not before the lease duration has passed");
    await run(clock, 3_000, [a, b]);
    assert.equal(b.elector.isLeader(), true);
    const takeover = Number(b.events[0]?.split("@")[1]) - lastRenewal;
    assert.ok(takeover >= 15_000 && takeover <= 17_000, `took over after ${takeover} ms`);
    await b.elector.stop();
  });

  it("ignores a wall-clock jump back: a leader that cannot renew still steps down at renewDeadline", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    a.elector.start();
    await run(clock, 4_000, [a]);
    const lastRenewal = clock.monotonicMs();
    // WHEN the leader is partitioned and its wall clock steps an hour back
    a.lease.down = true;
    clock.jumpWall(-3_600_000);
    await run(clock, 12_000, [a]);
    // THEN it steps down exactly renewDeadline after its last renewal
    const lost = a.events.find((e) => e.startsWith("stopped:lost"));
    assert.ok(lost, a.events.join(", "));
    assert.equal(Number(lost.split("@")[1]) - lastRenewal, 10_000);
  });

  it("says the Lease was deleted when its namespace went (pulumi destroy), and what to do", async () => {
    // GIVEN a leader of the platform's Lease
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const losses: (LeadershipLoss | undefined)[] = [];
    const a = candidate(store, clock, "a", {
      onStoppedLeading: (_reason: LeadershipEnd, loss?: LeadershipLoss) => losses.push(loss),
    });
    a.elector.start();
    await run(clock, 4_000, [a]);
    assert.equal(a.elector.isLeader(), true);
    // WHEN its namespace is deleted: first terminating (the Lease deleted with it, no create allowed), then gone
    store.current = undefined;
    const terminating = new ForbiddenError(
      403,
      "leases.coordination.k8s.io is forbidden: unable to create new content in namespace shop-platform because it is being terminated",
      "Forbidden",
      [
        {
          field: "metadata.namespace",
          message: "namespace shop-platform is being terminated",
          reason: "NamespaceTerminating",
        },
      ],
    );
    const gone = new NotFoundError(404, 'namespaces "shop-platform" not found', "NotFound");
    let creates = 0;
    a.lease.create = () => Promise.reject(++creates <= 2 ? terminating : gone);
    await run(clock, 12_000, [a]);
    // THEN it steps down at renewDeadline, saying the Lease is gone
    assert.equal(a.elector.isLeader(), false);
    assert.deepEqual(losses, ["deleted"]);
    assert.match(
      leadershipLostMessage({ namespace: "shop-platform", name: "shop-platform-leader" }, "deleted"),
      /^leader election lost; exiting: the Lease shop-platform\/shop-platform-leader was deleted, or its namespace shop-platform was \(as `pulumi destroy` of the platform does\)\. Start the operator again before the next `pulumi up`/,
    );
    await a.elector.stop();
  });

  it("a Lease deleted while its namespace stays is made again: leadership goes on", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, "a");
    a.elector.start();
    await run(clock, 4_000, [a]);
    store.current = undefined; // kubectl delete lease
    await run(clock, 12_000, [a]);
    assert.equal(a.elector.isLeader(), true, a.events.join(", "));
    const remade = store.writes.at(-1);
    assert.equal(remade?.by, "a");
    assert.equal(remade.record.holderIdentity, "a");
    await a.elector.stop();
  });

  it("a Lease taken by another holder, or an apiserver out of reach, is not reported as deleted", async () => {
    for (const cut of ["taken", "unreachable"] as const) {
      const clock = new FakeClock();
      const store = new FakeLeaseStore();
      const losses: (LeadershipLoss | undefined)[] = [];
      const a = candidate(store, clock, "a", {
        onStoppedLeading: (_reason: LeadershipEnd, loss?: LeadershipLoss) => losses.push(loss),
      });
      a.elector.start();
      await run(clock, 4_000, [a]);
      if (cut === "taken") {
        const held = store.current!.record;
        store.write("thief", { ...held, holderIdentity: "thief", leaseDurationSeconds: 3600 });
      } else {
        a.lease.get = () => Promise.reject(new ApiError(0, "connect ECONNREFUSED"));
      }
      await run(clock, 12_000, [a]);
      assert.deepEqual(losses, ["not-renewed"], cut);
      assert.equal(
        leadershipLostMessage({ namespace: "shop-platform", name: "shop-platform-leader" }, "not-renewed"),
        "leader election lost; exiting",
      );
      await a.elector.stop();
    }
  });

  it("rejects timings that would allow two leaders", () => {
    const store = new FakeLeaseStore();
    const clock = new FakeClock();
    assert.throws(
      () => candidate(store, clock, "a", { leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }),
      /leaseDurationMs/,
    );
    assert.throws(
      () => candidate(store, clock, "a", { renewDeadlineMs: 2_000, retryPeriodMs: 2_000 }),
      /retryPeriodMs/,
    );
  });

  it("writes MicroTime with six fractional digits", () => {
    assert.equal(microTime(Date.UTC(2030, 0, 2, 3, 4, 5, 678)), "2030-01-02T03:04:05.678000Z");
  });
});
