/**
 * A smoke of the chaos suite (test/chaos, `npm run chaos` at full size) inside `npm test`: the same scenarios,
 * small: 3 SIGKILLs during create and rollout of 8 instances (2 with storage), a delete of 4 instances while the
 * operator is down, a 20 s apiserver brown-out during a rollout of 4, an etcd restart (5 s down) during a create
 * and a rollout of 6 (on a cluster of its own; the apiserver restart, twice as long, runs only in
 * `npm run chaos`), a leader failover under a load of 6, a revoked token under a rollout of 4, Ctrl-C during a
 * `pulumi up` of 4, and 50 fuzzed manifests through zod, kubectl and the provider's check (2 invalid ones through
 * `pulumi preview`), and hostile tenants: every attack of the corpus once and a flood of 50 instances while 10
 * well-behaved ones (2 with storage, 3 on a chart) roll out (restarts, policy-breaking objects and requests
 * outside the allow-list all 0, every hostile instance with its expected verdict; the p99 ratio is only
 * reported: at 10 instances it is noise).
 * Figures are not recorded.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import { after, describe, it } from "node:test";
import { adminClient } from "../support/cluster.ts";
import { downOwnClusters } from "../chaos/control-plane.ts";
import { fuzzedManifests } from "../chaos/fuzz.ts";
import { hostileTenants } from "../chaos/hostile-tenants.ts";
import { interruptedUp } from "../chaos/interrupted-up.ts";
import {
  apiserverBrownout,
  controlPlaneRestart,
  deleteWhileDown,
  leaderFailover,
  sigkillStorm,
  tokenRotation,
} from "../chaos/scenarios.ts";

const client = adminClient();

// Deadlines: a scenario takes 0.5-1.5 min, but on the local cluster a pod can wait minutes on kwok after an etcd
// restart (test/chaos/RESULTS.md; 475 s once), and the etcd scenario has two outages, each waited on up to 15 min.
describe("chaos smoke", { timeout: 45 * 60_000 }, () => {
  after(downOwnClusters);
  it("SIGKILL storm, small", async (t) => {
    t.diagnostic(
      JSON.stringify(await sigkillStorm(t, client, { instances: 8, withStorage: 2, kills: 3, killIntervalMs: 3_000 })),
    );
  });
  it("delete while the operator is down, small", async (t) => {
    t.diagnostic(JSON.stringify(await deleteWhileDown(t, client, { instances: 4, withStorage: 2 })));
  });
  it("apiserver brown-out, small", async (t) => {
    t.diagnostic(JSON.stringify(await apiserverBrownout(t, client, { instances: 4, brownoutMs: 20_000 })));
  });
  it("etcd restart, small", { timeout: 35 * 60_000 }, async (t) => {
    const size = { instances: 6, withStorage: 2, component: "etcd" as const, downMs: 5_000 };
    t.diagnostic(JSON.stringify(await controlPlaneRestart(t, size)));
  });
  it("leader failover under load, small", async (t) => {
    t.diagnostic(JSON.stringify(await leaderFailover(t, client, { instances: 6 })));
  });
  it("token revoked under a rollout, small", async (t) => {
    t.diagnostic(JSON.stringify(await tokenRotation(t, client, { instances: 4, mode: "revocation", lateMs: 5_000 })));
  });
  it("Ctrl-C during pulumi up, small", async (t) => {
    t.diagnostic(JSON.stringify(await interruptedUp(t, client, { instances: 4, withStorage: 1, signal: "SIGINT" })));
  });
  it("fuzzed manifests, small", async (t) => {
    t.diagnostic(JSON.stringify(await fuzzedManifests(t, client, { count: 50, seed: 13, invalidPreviews: 2 })));
  });
  it("hostile tenants, small", async (t) => {
    const size = { tenants: 10, namespaces: 1, withStorage: 2, withChart: 3, flood: 50, namespaceBudget: 20 };
    const { figures } = await hostileTenants(t, client, {
      ...size,
      maxConsecutiveFailures: 2,
      verdictTimeoutMs: 4 * 60_000,
    });
    t.diagnostic(JSON.stringify(figures));
  });
});
