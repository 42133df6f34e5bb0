/**
 * Retries without parking, against the real cluster: an instance whose workload the apiserver refuses with 403
 * (a ResourceQuota of zero Deployments: the same answer as RBAC that is still rolling out) fails its fast
 * retries, becomes Stalled with reason TransientFailure and the apiserver's message, and is never Degraded. Once
 * the cause is gone, the slow lane retries it without anyone touching the instance, it becomes Ready, and
 * Stalled is gone.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { adminClient, testNamespace, waitFor, kubectl } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  isReadyAtSpec,
  recordInstance,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";

const client = adminClient();

test("a transient 403 stalls an instance without Degraded; the slow lane heals it by itself", async (t) => {
  const namespace = await testNamespace(t, client, "op-transient");
  // GIVEN Deployments are refused in the namespace (403 Forbidden: exceeded quota)
  await kubectl("-n", namespace, "create", "quota", "no-deployments", "--hard=count/deployments.apps=0");
  // Admission enforces a quota once the quota controller has published its limits.
  await waitFor("the quota to be published", async () => {
    const hard = await kubectl(
      "-n",
      namespace,
      "get",
      "resourcequota",
      "no-deployments",
      "-o",
      "jsonpath={.status.hard}",
    );
    return hard.trim() ? true : undefined;
  });
  // and an operator with 3 fast retries and a 5 s slow lane (the defaults are 15 and 300 s)
  const operator = await startOperator(t, {
    namespaces: [namespace],
    leaderElection: false,
    args: ["--max-consecutive-failures=3", "--slow-retry-interval=5"],
  });
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  const recording = await recordInstance(client, namespace, "web");

  // THEN it becomes Stalled for a transient cause, quoting the apiserver, and is not Degraded
  const stalled = await waitForInstance(client, namespace, "web", "Stalled", (instance) => {
    return conditionOf(instance, "Stalled")?.status === "True";
  });
  const condition = conditionOf(stalled, "Stalled");
  assert.equal(condition?.reason, "TransientFailure");
  assert.match(condition?.message ?? "", /retrying about every 5s.*forbidden.*exceeded quota/i);
  assert.notEqual(conditionOf(stalled, "Degraded")?.status, "True");
  // and it keeps being retried in the slow lane (not parked): more stalled attempts follow
  await operator.waitForLog((line) => line.msg === "reconcile stalled; retrying slowly" && Number(line.failures) >= 5, {
    what: "a fifth failed attempt in the slow lane",
    timeoutMs: 120_000,
  });

  // WHEN the cause goes away, with no change to the instance
  const generation = stalled.metadata.generation;
  await kubectl("-n", namespace, "delete", "resourcequota", "no-deployments");

  // THEN the next slow retry succeeds: Ready, Stalled gone, and never Degraded on the way
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec, 120_000);
  assert.equal(ready.metadata.generation, generation, "nobody touched the instance");
  assert.equal(conditionOf(ready, "Stalled"), undefined);
  await recording.stop();
  const degraded = recording.versions.filter((v) => conditionOf(v, "Degraded")?.status === "True");
  assert.deepEqual(
    degraded.map((v) => conditionOf(v, "Degraded")?.reason),
    [],
    "a transient cause never makes the instance Degraded",
  );
  assert.ok(
    operator.logs.some((line) => line.msg === "reconciled" && line.recovered === true),
    "the recovery is logged",
  );
});
