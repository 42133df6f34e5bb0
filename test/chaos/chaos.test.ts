/**
 * `npm run chaos`: the chaos scenarios at full size against the local cluster, each recorded in RESULTS.md.
 * Sizes can be changed with CHAOS_INSTANCES, CHAOS_STORAGE, CHAOS_KILLS (defaults: 150, 50, 10). The same code
 * runs small inside `npm test` (test/integration/chaos-smoke.test.ts).
 *
 * Scenarios: SIGKILL storm, delete while down, apiserver brown-out, apiserver and etcd restarts (on a local
 * cluster of their own, `chaos-outage`, created and deleted here), leader failover, token expiry, interrupted
 * `pulumi up` (SIGINT and SIGKILL), fuzzed manifests and hostile tenants (test/chaos/hostile-tenants.ts; sizes
 * CHAOS_HOSTILE_TENANTS, CHAOS_HOSTILE_NAMESPACES, CHAOS_HOSTILE_STORAGE, CHAOS_HOSTILE_CHARTS, CHAOS_HOSTILE_FLOOD,
 * CHAOS_HOSTILE_BUDGET (instances per namespace, enforced by the operator's webhook), defaults 100, 4, 10, 20,
 * 2000, 100). Its p99 ratio is a timing figure, recorded beside its goal (1.2) and not asserted: on a shared
 * 2-core machine it moves by ±0.3 with the load, and timing targets belong in records, not in assertions; set
 * CHAOS_HOSTILE_MAX_RATIO to fail a run above it (on a machine where the goal is a promise). Run them one at a time
 * with `npm run chaos -- --test-name-pattern=etcd`.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { adminClient } from "../support/cluster.ts";
import { downOwnClusters } from "./control-plane.ts";
import { fuzzedManifests } from "./fuzz.ts";
import { hostileTenants } from "./hostile-tenants.ts";
import { interruptedUp } from "./interrupted-up.ts";
import { recordScenario } from "./record.ts";
import {
  apiserverBrownout,
  controlPlaneRestart,
  deleteWhileDown,
  leaderFailover,
  sigkillStorm,
  tokenRotation,
} from "./scenarios.ts";

const client = adminClient();
const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const instances = setting("CHAOS_INSTANCES", 150);
const withStorage = setting("CHAOS_STORAGE", 50);
const kills = setting("CHAOS_KILLS", 10);
const hostile = {
  tenants: setting("CHAOS_HOSTILE_TENANTS", 100),
  namespaces: setting("CHAOS_HOSTILE_NAMESPACES", 4),
  withStorage: setting("CHAOS_HOSTILE_STORAGE", 10),
  withChart: setting("CHAOS_HOSTILE_CHARTS", 20),
  flood: setting("CHAOS_HOSTILE_FLOOD", 2000),
  namespaceBudget: setting("CHAOS_HOSTILE_BUDGET", 100),
  maxConsecutiveFailures: 3,
  // Under the runner's 15-minute test timeout, so a verdict that never comes is reported by name.
  verdictTimeoutMs: 10 * 60_000,
};
/** The hostile-tenants goal for the well-behaved p99 change→Ready with attackers ÷ without. */
const p99RatioGoal = 1.2;
const maxRatio = process.env["CHAOS_HOSTILE_MAX_RATIO"] ? setting("CHAOS_HOSTILE_MAX_RATIO", p99RatioGoal) : undefined;

describe("chaos", { timeout: 60 * 60_000 }, () => {
  after(downOwnClusters);
  it(`SIGKILL storm: ${kills} kills during create and rollout of ${instances} instances (${withStorage} with storage)`, async (t) => {
    const figures = await sigkillStorm(t, client, { instances, withStorage, kills, killIntervalMs: 6_000 });
    t.diagnostic(JSON.stringify(figures));
    recordScenario("sigkill-storm", figures);
  });

  it("delete while the operator is down: 30 instances, 10 with storage", async (t) => {
    const figures = await deleteWhileDown(t, client, { instances: 30, withStorage: 10 });
    t.diagnostic(JSON.stringify(figures));
    recordScenario("delete-while-down", figures);
  });

  it("apiserver brown-out: every request of the operator gets 503 for 3 minutes during a rollout of 50", async (t) => {
    const figures = await apiserverBrownout(t, client, { instances: 50, brownoutMs: 180_000 });
    t.diagnostic(JSON.stringify(figures));
    recordScenario("apiserver-brownout", figures);
  });

  it("apiserver restart: SIGKILLed for 20 s during a create and again during a rollout of 50 (10 with storage)", async (t) => {
    const figures = await controlPlaneRestart(t, {
      instances: 50,
      withStorage: 10,
      component: "kube-apiserver",
      downMs: 20_000,
    });
    t.diagnostic(JSON.stringify(figures));
    recordScenario("apiserver-restart", figures);
  });

  it("etcd restart: SIGKILLed for 15 s during a create and again during a rollout of 50 (10 with storage)", async (t) => {
    const figures = await controlPlaneRestart(t, {
      instances: 50,
      withStorage: 10,
      component: "etcd",
      downMs: 15_000,
    });
    t.diagnostic(JSON.stringify(figures));
    recordScenario("etcd-restart", figures);
  });

  it("leader failover under load: 50 instances, the leader SIGKILLed while it works", async (t) => {
    const figures = await leaderFailover(t, client, { instances: 50 });
    t.diagnostic(JSON.stringify(figures));
    recordScenario("leader-failover", figures);
  });

  it("token expiry: a 600 s token expires under a rollout of 50, the renewal comes 30 s late", async (t) => {
    const figures = await tokenRotation(t, client, { instances: 50, mode: "expiry", lateMs: 30_000 });
    t.diagnostic(JSON.stringify(figures));
    recordScenario("token-expiry", figures);
  });

  for (const signal of ["SIGINT", "SIGKILL"] as const) {
    it(`interrupted pulumi up: ${signal} during an up of 30 instances (10 with storage), then recovery`, async (t) => {
      const figures = await interruptedUp(t, client, { instances: 30, withStorage: 10, signal });
      t.diagnostic(JSON.stringify(figures));
      recordScenario(`interrupted-up-${signal.toLowerCase()}`, figures);
    });
  }

  it("500 fuzzed manifests: zod, the apiserver (kubectl apply) and the provider (pulumi preview) agree", async (t) => {
    const figures = await fuzzedManifests(t, client, { count: 500, seed: 13, invalidPreviews: Infinity });
    t.diagnostic(JSON.stringify(figures));
    recordScenario("fuzzed-manifests", figures);
  });

  it(`hostile tenants: the attack corpus and a flood of ${hostile.flood} while ${hostile.tenants} well-behaved instances (${hostile.withStorage} with storage, ${hostile.withChart} on a chart) roll out`, async (t) => {
    const { figures, ratio } = await hostileTenants(t, client, hostile);
    const withGoal = { ...figures, p99RatioGoal, p99RatioGoalMet: ratio <= p99RatioGoal ? "yes" : "no" };
    t.diagnostic(JSON.stringify(withGoal));
    recordScenario("hostile-tenants", withGoal);
    if (ratio > p99RatioGoal) {
      t.diagnostic(`well-behaved p99 change→Ready with attackers ÷ without: ${ratio.toFixed(2)}, goal ${p99RatioGoal}`);
    }
    if (maxRatio !== undefined) {
      assert.ok(
        ratio <= maxRatio,
        `well-behaved p99 change→Ready with attackers ÷ without: ${ratio.toFixed(2)} > ${maxRatio}`,
      );
    }
  });
});
