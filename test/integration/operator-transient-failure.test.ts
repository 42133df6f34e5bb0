/**
 * Retries without parking, against the real cluster: an instance whose workload the apiserver cannot admit for a
 * transient cause (a validating webhook that does not answer, failurePolicy Fail: the apiserver's 500 "failed
 * calling webhook", as during a webhook's outage) fails its fast retries, becomes Stalled with reason
 * TransientFailure and the apiserver's message, and is never Degraded. Once the cause is gone, the slow lane
 * retries it without anyone touching the instance, it becomes Ready, and Stalled is gone. (A refusal by admission
 * itself, such as an exceeded quota, is permanent: operator-admission-rejected.test.ts.)
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { adminClient, kubectl, testNamespace } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  isReadyAtSpec,
  recordInstance,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";

const client = adminClient();

test("a transient admission failure (a webhook that does not answer) stalls an instance without Degraded; the slow lane heals it by itself", async (t) => {
  const namespace = await testNamespace(t, client, "op-transient");
  // GIVEN Deployments of the namespace must pass a webhook that does not answer (its endpoint refuses connections)
  const webhook = `myapp-test-unreachable-${namespace}`;
  const manifest = path.join(tmpdir(), `${webhook}.json`);
  writeFileSync(
    manifest,
    JSON.stringify({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: webhook },
      webhooks: [
        {
          name: "unreachable.myapp.example.com",
          clientConfig: { url: "https://127.0.0.1:1/validate" },
          rules: [
            { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"] },
          ],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
          failurePolicy: "Fail",
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          timeoutSeconds: 2,
        },
      ],
    }),
  );
  await kubectl("apply", "-f", manifest);
  rmSync(manifest);
  t.after(() => kubectl("delete", "validatingwebhookconfiguration", webhook, "--ignore-not-found"));
  // and an operator with 3 fast retries and a 5 s slow lane (the defaults are 15 and 300 s)
  const operator = await startOperator(t, {
    namespaces: [namespace],
    leaderElection: false,
    args: ["--max-consecutive-failures=3", "--slow-retry-interval=5"],
  });
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  const recording = await recordInstance(client, namespace, "web", t);

  // THEN it becomes Stalled for a transient cause, quoting the apiserver, and is not Degraded
  const stalled = await waitForInstance(client, namespace, "web", "Stalled", (instance) => {
    return conditionOf(instance, "Stalled")?.status === "True";
  });
  const condition = conditionOf(stalled, "Stalled");
  assert.equal(condition?.reason, "TransientFailure");
  assert.match(condition?.message ?? "", /retrying about every 5s.*failed calling webhook/i);
  assert.notEqual(conditionOf(stalled, "Degraded")?.status, "True");
  // and it keeps being retried in the slow lane (not parked): more stalled attempts follow
  await operator.waitForLog((line) => line.msg === "reconcile stalled; retrying slowly" && Number(line.failures) >= 5, {
    what: "a fifth failed attempt in the slow lane",
    timeoutMs: 120_000,
  });

  // WHEN the cause goes away, with no change to the instance
  const generation = stalled.metadata.generation;
  await kubectl("delete", "validatingwebhookconfiguration", webhook);

  // THEN the next slow retry succeeds: Ready, Stalled gone, and never Degraded on the way
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec, 120_000);
  assert.equal(ready.metadata.generation, generation, "nobody touched the instance");
  assert.equal(conditionOf(ready, "Stalled"), undefined);
  await recording.stop(ready);
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
