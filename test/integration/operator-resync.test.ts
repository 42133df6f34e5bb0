/**
 * A converged instance costs zero API writes: over forced resyncs (--resync-period=2 re-reconciles every instance
 * every 2 s) and after an operator restart, read from the operator's own write counter
 * (`myapp_operator_api_writes_total`) and from each reconcile's log line (`writes: 0`), and confirmed on the
 * cluster: the instances' resourceVersions do not move.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { scrape, sum } from "../../bench/support/prometheus.ts";
import {
  createInstance,
  getInstance,
  instanceWrites,
  isReadyAtSpec,
  startOperator,
  waitForInstance,
  type LogLine,
  type OperatorProcess,
} from "../support/operator.ts";

const client = adminClient();
const resyncs = 3;

/** The "reconciled" lines of `key` logged after the first `from` lines. */
function reconciles(operator: OperatorProcess, key: string, from = 0): LogLine[] {
  return operator.logs.slice(from).filter((line) => line.msg === "reconciled" && line.key === key);
}

/** Waits until each key has `count` reconciles logged after `from`; returns them all. */
async function awaitReconciles(operator: OperatorProcess, keys: readonly string[], count: number, from = 0) {
  await waitFor(
    `${count} reconciles of each of ${keys.join(", ")}`,
    async () => (keys.every((key) => reconciles(operator, key, from).length >= count) ? true : undefined),
    { timeoutMs: 60_000 },
  );
  return keys.flatMap((key) => reconciles(operator, key, from));
}

test("converged instances cost zero writes on forced resyncs and after an operator restart", async (t) => {
  const namespace = await testNamespace(t, client, "op-resync");
  const args = ["--resync-period=2"];
  const first = await startOperator(t, { namespaces: [namespace], args, label: "first" });
  // One instance of each workload kind.
  await createInstance(client, namespace, "web", { replicas: 2, image: "nginx:1.27" });
  await createInstance(client, namespace, "db", { replicas: 2, image: "postgres:17", storage: "1Gi" });
  const keys = [`${namespace}/web`, `${namespace}/db`];
  for (const name of ["web", "db"]) await waitForInstance(client, namespace, name, "Ready", isReadyAtSpec);

  // Converged: the last reconcile of each instance wrote nothing (the rollout's tail may still be settling before).
  await waitFor(
    "a reconcile with writes: 0 of each instance",
    async () => (keys.every((key) => reconciles(first, key).at(-1)?.writes === 0) ? true : undefined),
    { timeoutMs: 60_000 },
  );
  const writesBefore = await instanceWrites(first);
  assert.ok(writesBefore > 0, "creating the instances took writes, so the counter counts");
  const reconcilesBefore = sum(await scrape(first.metricsUrl), "controller_runtime_reconcile_total");
  const versionsBefore = await resourceVersions(namespace);
  const mark = first.logs.length;

  // WHEN several resyncs pass
  const resynced = await awaitReconciles(first, keys, resyncs, mark);

  // THEN each of those reconciles wrote nothing, and neither did the operator as a whole
  assert.deepEqual(
    resynced.map((line) => line.writes),
    resynced.map(() => 0),
  );
  assert.equal(await instanceWrites(first), writesBefore, "myapp_operator_api_writes_total did not move");
  const reconcilesAfter = sum(await scrape(first.metricsUrl), "controller_runtime_reconcile_total");
  assert.ok(reconcilesAfter >= reconcilesBefore + 2 * resyncs, "the resync reconciles were counted");
  assert.deepEqual(await resourceVersions(namespace), versionsBefore, "no object of the test namespace changed");

  // WHEN the operator is restarted (SIGTERM: it releases the lease, so the next one leads at once)
  assert.deepEqual(await first.stop(), { code: 0, signal: null });
  const second = await startOperator(t, { namespaces: [namespace], args, label: "second" });

  // THEN its first reconciles (from the initial list) and its resyncs write nothing either
  const afterRestart = await awaitReconciles(second, keys, resyncs);
  assert.deepEqual(
    afterRestart.map((line) => line.writes),
    afterRestart.map(() => 0),
  );
  assert.equal(await instanceWrites(second), 0, "the restarted operator wrote nothing for converged instances");
  assert.deepEqual(await resourceVersions(namespace), versionsBefore, "no object of the test namespace changed");
  for (const name of ["web", "db"]) assert.ok(isReadyAtSpec(await getInstance(client, namespace, name)));
});

/**
 * resourceVersion of every object the operator writes in `namespace`: the instances and their children. Pods are
 * left out: kwok and the kubelet stand-in may touch them without any write of ours.
 */
async function resourceVersions(namespace: string): Promise<Record<string, string>> {
  const kinds = [
    ["example.com/v1", "MyAppInstance"],
    ["apps/v1", "Deployment"],
    ["apps/v1", "StatefulSet"],
    ["v1", "Service"],
  ] as const;
  const versions: Record<string, string> = {};
  for (const [apiVersion, kind] of kinds) {
    for (const item of (await client.list(apiVersion, kind, { namespace })).items) {
      versions[`${kind}/${item.metadata.name ?? ""}`] = item.metadata.resourceVersion ?? "";
    }
  }
  return versions;
}
