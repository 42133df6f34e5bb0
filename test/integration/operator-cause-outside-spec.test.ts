/**
 * A cause fixed outside the spec: an instance Degraded because another object holds its Service's name, or because
 * the namespace's quota refuses its Service, becomes Ready once that object or quota is gone, with no change of the
 * instance. The operator caches only its own objects, so no event tells it: it looks again in the slow lane (here
 * `--slow-retry-interval=2`, 300 s by default), or at once when the instance is annotated with
 * myapp.example.com/reconcile-requested-at, and then the status names the request in lastHandledReconcileAt.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { reconcileRequestAnnotation } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, createForeignService, kubectl, testNamespace, waitFor } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  isReadyAtSpec,
  startOperator,
  waitForInstance,
  type Instance,
} from "../support/operator.ts";

const client = adminClient();

test("an instance stuck on a clash fixed by hand becomes Ready when a reconcile is requested", async (t) => {
  const namespace = await testNamespace(t, client, "op-request");
  await startOperator(t, { namespaces: [namespace] });

  // GIVEN a Service named like the instance, controlled by something else: the operator reports it
  const stuck = await degradedByClash(namespace, "web");
  assert.equal(stuck.status?.lastHandledReconcileAt, undefined, "no request yet, none answered");

  // WHEN the clash is removed by hand (nothing of the instance's changes) and a reconcile is requested, long
  // before the slow lane's next look (300 s)
  await client.delete("v1", "Service", "web", namespace);
  const request = "2030-01-01T00:00:00Z";
  await kubectl("annotate", "myappinstance", "web", "-n", namespace, `${reconcileRequestAnnotation}=${request}`);

  // THEN the instance becomes Ready, with a Service of its own, and its status answers that request
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  assert.equal(ready.status?.lastHandledReconcileAt, request);
  await assertOwnService(namespace, ready);
});

test("an instance whose Service name another object held becomes Ready by itself once that object is deleted", async (t) => {
  const namespace = await testNamespace(t, client, "op-outside");
  await startOperator(t, { namespaces: [namespace], args: ["--slow-retry-interval=2"] });

  // GIVEN a Service named like the instance, controlled by something else
  const stuck = await degradedByClash(namespace, "web");

  // WHEN that Service is deleted by hand, and nothing of the instance changes
  await client.delete("v1", "Service", "web", namespace);

  // THEN the instance becomes Ready with a Service of its own, at the generation it had, no request answered
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  assert.equal(ready.metadata.generation, stuck.metadata.generation);
  assert.equal(ready.status?.lastHandledReconcileAt, undefined);
  await assertOwnService(namespace, ready);
});

test("an instance whose Service the namespace's quota refused becomes Ready by itself once the quota allows it", async (t) => {
  const namespace = await testNamespace(t, client, "op-outside-quota");
  await startOperator(t, { namespaces: [namespace], args: ["--slow-retry-interval=2"] });

  // GIVEN a namespace whose quota allows no Service
  await kubectl("create", "quota", "no-services", "--hard=services=0", "-n", namespace);
  await waitFor(`ResourceQuota ${namespace}/no-services enforced`, async () => {
    const hard = await kubectl(
      "get",
      "quota",
      "no-services",
      "-n",
      namespace,
      "-o",
      "jsonpath={.status.hard.services}",
    );
    return hard === "0" ? true : undefined;
  });
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  const refused = await degraded(namespace, "web", "ChildRejected");
  assert.match(conditionOf(refused, "Degraded")?.message ?? "", /quota/);

  // WHEN the platform owner deletes the quota, and nothing of the instance changes
  await kubectl("delete", "quota", "no-services", "-n", namespace);

  // THEN the instance becomes Ready at the generation it had
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  assert.equal(ready.metadata.generation, refused.metadata.generation);
  assert.equal(ready.status?.lastHandledReconcileAt, undefined);
});

/** Creates a Service `name` controlled by something else, then the instance `name`; resolves once it is Degraded. */
async function degradedByClash(namespace: string, name: string): Promise<Instance> {
  await createForeignService(client, namespace, name);
  await createInstance(client, namespace, name, { replicas: 1, image: "nginx:1.27" });
  return degraded(namespace, name, "ChildOwnedElsewhere");
}

async function degraded(namespace: string, name: string, reason: string): Promise<Instance> {
  const what = `Degraded ${reason}`;
  return waitForInstance(
    client,
    namespace,
    name,
    what,
    (instance) => conditionOf(instance, "Degraded")?.reason === reason,
  );
}

/** The instance's Service is its own now: controlled by the instance. */
async function assertOwnService(namespace: string, instance: Instance): Promise<void> {
  const service = await client.get<KubeObject>("v1", "Service", instance.metadata.name!, namespace);
  assert.equal(service.metadata.ownerReferences?.find((reference) => reference.controller)?.uid, instance.metadata.uid);
}
