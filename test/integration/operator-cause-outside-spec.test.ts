/**
 * A cause fixed outside the spec: an instance Degraded because another object holds its Service's name, or because
 * the namespace's quota refuses its Service, becomes Ready once that object or quota is gone, with no change of the
 * instance. The operator caches only its own objects, so no event tells it: it looks again in the slow lane (here
 * `--slow-retry-interval=2`, 300 s by default), or at once when the instance is annotated with
 * myapp.example.com/reconcile-requested-at, and then the status names the request in lastHandledReconcileAt. A
 * Service that no object controls is refused all the same, never taken over.
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

test("an instance named like a Service nobody controls is refused, and the Service is left as it was", async (t) => {
  const namespace = await testNamespace(t, client, "op-no-takeover");
  await startOperator(t, { namespaces: [namespace] });

  // GIVEN a Service without a controller or the operator's label (a platform's, which the tenant may not edit)
  const platform = await client.create<KubeObject>({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace, labels: { team: "platform" } },
    spec: { selector: { app: "payments" }, ports: [{ port: 443, targetPort: 8443 }] },
  });

  // WHEN an instance of that name is created
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });

  // THEN it is Degraded, naming the Service, and nothing was written: the Service keeps its version, gained no
  // controller (the garbage collector would delete it with the instance), and no Deployment was made
  const refused = await degraded(namespace, "web", "ChildOwnedElsewhere");
  assert.match(
    conditionOf(refused, "Degraded")?.message ?? "",
    /^Service .*\/web already exists and is not the instance's \(it has no controller\)/,
  );
  const after = await client.get<KubeObject>("v1", "Service", "web", namespace);
  assert.equal(after.metadata.resourceVersion, platform.metadata.resourceVersion);
  assert.equal(after.metadata.ownerReferences, undefined);
  assert.equal(await client.find("apps/v1", "Deployment", "web", namespace), undefined);
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
