/**
 * Two operator processes with --leader-elect on one Lease: exactly one leads and reconciles, the other stands by
 * (ready, with warm caches, reconciling nothing). After the leader is killed with SIGKILL (no chance to release
 * the Lease) the standby takes over once the Lease expires, and keeps reconciling.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { scrape, sum } from "../../bench/support/prometheus.ts";
import {
  createInstance,
  isReadyAtSpec,
  patchSpec,
  startOperator,
  waitForInstance,
  type OperatorProcess,
} from "../support/operator.ts";

const client = adminClient();

/** Lease timing of operator/runtime/leader-election.ts (its defaults, which main.ts keeps). */
const leaseDurationMs = 15_000;

type Lease = KubeObject & { spec?: { holderIdentity?: string; renewTime?: string } };

test("two operators elect one leader; after SIGKILL of the leader the other takes over and keeps reconciling", async (t) => {
  const namespace = await testNamespace(t, client, "op-leader");
  const leaseName = `myapp-operator-${namespace}`;
  const leaderElection = { namespace, id: leaseName };
  const processes = await Promise.all(
    ["a", "b"].map((label) => startOperator(t, { namespaces: [namespace], leaderElection, label })),
  );
  const holder = async () =>
    (await client.find<Lease>("coordination.k8s.io/v1", "Lease", leaseName, namespace))?.spec?.holderIdentity;
  const becameLeader = (op: OperatorProcess) => op.logs.some((line) => line.msg === "became leader");

  // THEN exactly one becomes leader and holds the Lease
  const leaders = await waitFor("a leader", async () => {
    const found = processes.filter(becameLeader);
    return found.length > 0 ? found : undefined;
  });
  assert.equal(leaders.length, 1, "exactly one process became leader");
  const leader = leaders[0]!;
  const standby = processes.find((op) => op !== leader)!;
  assert.equal(await holder(), leader.identity);
  // and both are ready (a standby keeps warm caches), each reporting its role in leader_election_master_status
  for (const op of processes) {
    await waitFor(`${op.identity} /readyz`, async () =>
      (await fetch(`${op.probeUrl}/readyz`)).status === 200 ? true : undefined,
    );
    const status = sum(await scrape(op.metricsUrl), "leader_election_master_status", (l) => l.name === leaseName);
    assert.equal(status, op === leader ? 1 : 0, `leader_election_master_status of ${op.identity}`);
  }

  // WHEN an instance is created THEN the leader, and only the leader, reconciles it to Ready
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  const key = `${namespace}/web`;
  const reconciledBy = (op: OperatorProcess) =>
    op.logs.filter((line) => line.msg === "reconciled" && line.key === key && Number(line.writes) > 0);
  assert.ok(reconciledBy(leader).length > 0, "the leader reconciled the instance");
  assert.equal(
    standby.logs.some((line) => line.msg === "reconciled"),
    false,
    "the standby reconciled nothing",
  );
  // and keeps no keys meanwhile, not even of an instance that came and went (it looks at every one when it leads)
  await createInstance(client, namespace, "gone", { replicas: 1, image: "nginx:1.27" });
  await waitForInstance(client, namespace, "gone", "Ready", isReadyAtSpec);
  await client.delete(apiVersion, kind, "gone", namespace);
  await waitFor("gone deleted", async () =>
    (await client.find(apiVersion, kind, "gone", namespace)) ? undefined : true,
  );
  const standbyMetrics = await scrape(standby.metricsUrl);
  assert.equal(sum(standbyMetrics, "workqueue_adds_total"), 0, "the standby queued no key");
  assert.equal(sum(standbyMetrics, "workqueue_depth"), 0, "nothing waits in the standby's queue");

  // WHEN the leader is killed without a chance to release the Lease
  const lastRenewal = async () => {
    const lease = await client.find<Lease>("coordination.k8s.io/v1", "Lease", leaseName, namespace);
    return lease?.spec?.holderIdentity === leader.identity ? Date.parse(lease.spec.renewTime ?? "") : undefined;
  };
  const renewedBeforeKill = await lastRenewal();
  const killedAt = Date.now();
  assert.deepEqual(await leader.kill(), { code: null, signal: "SIGKILL" });
  // its last renewal, as stored (one still in flight could only be later; the read before the kill is the fallback
  // should the standby already hold it)
  const renewedAt = (await lastRenewal()) ?? renewedBeforeKill;
  assert.ok(renewedAt !== undefined && Number.isFinite(renewedAt), "the leader's renewal was read");

  // THEN the standby takes over once the Lease expired: 15 s after it saw the last renewal (it sees it on its next
  // try), so within 15 s + 2 tries (each up to 4.4 s apart) of the kill. That bound is proven on a fake clock
  // (test/unit/runtime/leader-election.test.ts); here the takeover happens, and its time is reported.
  const line = await standby.waitForLog((candidate) => candidate.msg === "became leader", {
    what: '"became leader" line from the standby',
    timeoutMs: 120_000,
  });
  // pino's time: when it said so, after its Lease write (the wall clock, as the renewal's stamp)
  const tookOverAt = Number(line["time"]);
  t.diagnostic(
    `takeover ${tookOverAt - killedAt} ms after SIGKILL, ${tookOverAt - renewedAt} ms after the last renewal`,
  );
  assert.ok(tookOverAt - renewedAt >= leaseDurationMs, `not before the Lease expired (${tookOverAt - renewedAt} ms)`);
  assert.equal(await holder(), standby.identity);

  // and looks at the instances there are, once each, the one that went not among them
  await waitFor("the new leader's look at web", async () =>
    standby.logs.some((candidate) => candidate.msg === "reconciled" && candidate.key === key) ? true : undefined,
  );
  assert.equal(
    standby.logs.some((candidate) => candidate.msg === "reconciled" && candidate.key === `${namespace}/gone`),
    false,
    "no reconcile of the deleted instance",
  );

  // and keeps reconciling: a scale-up goes through the new leader
  await patchSpec(client, namespace, "web", { replicas: 3 });
  const scaled = await waitForInstance(client, namespace, "web", "Ready with 3 replicas", isReadyAtSpec);
  assert.equal(scaled.status?.readyReplicas, 3);
  assert.ok(reconciledBy(standby).length > 0, "the new leader made the writes of the scale-up");
});
