/**
 * The lost-lease path in a real process: an operator leading with --leader-elect whose Lease is taken by another
 * holder (as a standby would after a partition) can no longer renew; within its renew deadline it steps down and
 * exits with status 1, like controller-runtime, so a stale leader never keeps reconciling. Its restart rejoins as
 * a standby and leaves the Lease to its holder.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "../../kube/index.ts";
import { microTime } from "../../kube/micro-time.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";

const client = adminClient();

type Lease = KubeObject & { spec?: { holderIdentity?: string; leaseDurationSeconds?: number } };

test("a leader whose Lease is taken steps down and exits with status 1; its restart stands by", async (t) => {
  const namespace = await testNamespace(t, client, "op-lost");
  const leaseName = `myapp-operator-${namespace}`;
  const leaderElection = { namespace, id: leaseName };
  const leader = await startOperator(t, { namespaces: [namespace], leaderElection, label: "leader" });
  await leader.waitForLog((line) => line.msg === "became leader", { what: '"became leader"' });

  // WHEN another holder takes the Lease (the apiserver accepts the write: it is what a standby does once it
  // believes the lease expired, e.g. after a partition)
  const lease = await client.get<Lease>("coordination.k8s.io/v1", "Lease", leaseName, namespace);
  assert.equal(lease.spec?.holderIdentity, leader.identity);
  const now = microTime(Date.now());
  await client.replace<Lease>({
    ...lease,
    spec: { ...lease.spec, holderIdentity: "thief", leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
  } as Lease);

  // THEN the leader cannot renew, steps down and exits with status 1 (not a crash: a deliberate exit)
  const exit = await Promise.race([
    leader.exited,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 90_000).unref()),
  ]);
  assert.deepEqual(exit, { code: 1, signal: null }, `the leader should have exited${leader.logTail()}`);
  // Ordered by the lines' own timestamps: an error line may reach the pipe after a later info line.
  const at = (msg: string) => leader.logs.find((line) => line.msg === msg)?.["time"] as number | undefined;
  const steppedDown = at("could not renew the lease in time, stepping down");
  const exiting = at("leader election lost; exiting");
  assert.ok(
    steppedDown !== undefined && exiting !== undefined && exiting >= steppedDown,
    `step down, then exit${leader.logTail()}`,
  );
  assert.equal(
    leader.logs.some((line) => line.msg === "released the lease"),
    false,
    "a lost lease is not released: it is not ours",
  );

  // AND a restart joins as a standby, leaving the Lease to its holder
  const restarted = await startOperator(t, { namespaces: [namespace], leaderElection, label: "restarted" });
  await waitFor("the restarted operator to observe the holder", async () =>
    restarted.logs.some((line) => line.msg === "observed leader" && line.leader === "thief") ? true : undefined,
  );
  assert.equal(
    restarted.logs.some((line) => line.msg === "became leader"),
    false,
  );
  const holder = (await client.get<Lease>("coordination.k8s.io/v1", "Lease", leaseName, namespace)).spec;
  assert.equal(holder?.holderIdentity, "thief");
});
