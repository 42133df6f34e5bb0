/**
 * A cause outside the spec heals by itself: an instance Degraded because another object holds its Service's name,
 * or because the namespace's quota refuses its Service, becomes Ready once that object or quota is gone, with no
 * change of the instance and no reconcile request. The operator caches only its own objects, so no event tells it:
 * it looks again in the slow lane (here `--slow-retry-interval=2`, 300 s by default).
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, createForeignService, kubectl, testNamespace, waitFor } from "../support/cluster.ts";
import { conditionOf, createInstance, isReadyAtSpec, startOperator, waitForInstance } from "../support/operator.ts";

const client = adminClient();

test("an instance whose Service name another object held becomes Ready by itself once that object is deleted", async (t) => {
  const namespace = await testNamespace(t, client, "op-outside");
  await startOperator(t, { namespaces: [namespace], args: ["--slow-retry-interval=2"] });

  // GIVEN a Service named like the instance, controlled by something else
  await createForeignService(client, namespace, "web");
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  const stuck = await waitForInstance(
    client,
    namespace,
    "web",
    "Degraded ChildOwnedElsewhere",
    (instance) => conditionOf(instance, "Degraded")?.reason === "ChildOwnedElsewhere",
  );

  // WHEN that Service is deleted by hand, and nothing of the instance changes
  await client.delete("v1", "Service", "web", namespace);

  // THEN the instance becomes Ready with a Service of its own, at the generation it had, no request answered
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  assert.equal(ready.metadata.generation, stuck.metadata.generation);
  assert.equal(ready.status?.lastHandledReconcileAt, undefined);
  const service = await client.get<KubeObject>("v1", "Service", "web", namespace);
  assert.equal(service.metadata.ownerReferences?.find((reference) => reference.controller)?.uid, ready.metadata.uid);
});

test("an instance whose Service the namespace's quota refused becomes Ready by itself once the quota allows it", async (t) => {
  const namespace = await testNamespace(t, client, "op-outside-quota");
  await startOperator(t, { namespaces: [namespace], args: ["--slow-retry-interval=2"] });

  // GIVEN a namespace whose quota allows no Service
  await kubectl("create", "quota", "no-services", "--hard=services=0", "-n", namespace);
  await waitForQuotaStatus(namespace, "no-services");
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  const refused = await waitForInstance(
    client,
    namespace,
    "web",
    "Degraded ChildRejected",
    (instance) => conditionOf(instance, "Degraded")?.reason === "ChildRejected",
  );
  assert.match(conditionOf(refused, "Degraded")?.message ?? "", /quota/);

  // WHEN the platform owner deletes the quota, and nothing of the instance changes
  await kubectl("delete", "quota", "no-services", "-n", namespace);

  // THEN the instance becomes Ready at the generation it had
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  assert.equal(ready.metadata.generation, refused.metadata.generation);
  assert.equal(ready.status?.lastHandledReconcileAt, undefined);
});

/** Waits until the quota controller has filled in the quota's status, from when the apiserver enforces it. */
async function waitForQuotaStatus(namespace: string, name: string): Promise<void> {
  await waitFor(`ResourceQuota ${namespace}/${name} enforced`, async () => {
    const hard = await kubectl("get", "quota", name, "-n", namespace, "-o", "jsonpath={.status.hard.services}");
    return hard === "0" ? true : undefined;
  });
}
