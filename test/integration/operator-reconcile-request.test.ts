/**
 * Reconcile on request, as a kubectl user asks for it: a cause fixed outside the spec (a clashing Service deleted
 * by hand) is noticed when the instance is annotated with myapp.example.com/reconcile-requested-at, and the status
 * names the request it answers in lastHandledReconcileAt.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { reconcileRequestAnnotation } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, createForeignService, kubectl, testNamespace } from "../support/cluster.ts";
import { conditionOf, createInstance, isReadyAtSpec, startOperator, waitForInstance } from "../support/operator.ts";

const client = adminClient();

test("an instance stuck on a clash fixed by hand becomes Ready when a reconcile is requested", async (t) => {
  const namespace = await testNamespace(t, client, "op-request");
  await startOperator(t, { namespaces: [namespace] });

  // GIVEN a Service named like the instance, controlled by something else: the operator reports it and stops
  await createForeignService(client, namespace, "web");
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  const stuck = await waitForInstance(
    client,
    namespace,
    "web",
    "Degraded ChildOwnedElsewhere",
    (instance) => conditionOf(instance, "Degraded")?.reason === "ChildOwnedElsewhere",
  );
  assert.equal(stuck.status?.lastHandledReconcileAt, undefined, "no request yet, none answered");

  // WHEN the clash is removed by hand (nothing of the instance's changes) and a reconcile is requested
  await client.delete("v1", "Service", "web", namespace);
  const request = "2030-01-01T00:00:00Z";
  await kubectl("annotate", "myappinstance", "web", "-n", namespace, `${reconcileRequestAnnotation}=${request}`);

  // THEN the instance becomes Ready, with a Service of its own, and its status answers that request
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  assert.equal(ready.status?.lastHandledReconcileAt, request);
  const service = await client.get<KubeObject>("v1", "Service", "web", namespace);
  assert.equal(service.metadata.ownerReferences?.find((reference) => reference.controller)?.uid, ready.metadata.uid);
});
