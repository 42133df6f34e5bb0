/**
 * The headless governing Service, on the real local cluster: a StatefulSet made before it existed (governed by
 * the instance's ClusterIP Service, as older operators made it) is moved to it without downtime. serviceName is
 * immutable, so the operator re-creates the StatefulSet with `propagationPolicy: Orphan`: the same pods keep
 * running and are adopted, the instance never reports fewer ready replicas, and the ClusterIP Service clients use
 * is untouched.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import {
  createInstance,
  isReadyAtSpec,
  podsOf,
  recordInstance,
  startOperator,
  waitForGone,
  waitForInstance,
} from "../support/operator.ts";

const client = adminClient();

type StatefulSet = Typed<{
  spec: Record<string, unknown> & { serviceName: string };
  status?: { readyReplicas?: number; observedGeneration?: number };
}>;
type Service = Typed<{ spec: { clusterIP?: string } }>;

test("a StatefulSet governed by the ClusterIP Service moves to the headless one, keeping its pods", async (t) => {
  // GIVEN an instance with storage, Ready, and its StatefulSet replaced by one as an older operator made it
  const namespace = await testNamespace(t, client, "op-gov");
  const first = await startOperator(t, { namespaces: [namespace], label: "first" });
  const replicas = 2;
  await createInstance(client, namespace, "db", { replicas, image: "registry.example/db:1", storage: "1Gi" });
  const ready = await waitForInstance(client, namespace, "db", "Ready", isReadyAtSpec);
  await first.stop();

  const current = await client.get<StatefulSet>("apps/v1", "StatefulSet", "db", namespace);
  assert.equal(current.spec.serviceName, "db-pods");
  await client.delete("apps/v1", "StatefulSet", "db", namespace, { propagationPolicy: "Orphan" });
  await waitForGone(client, "apps/v1", "StatefulSet", namespace, "db");
  await client.delete("v1", "Service", "db-pods", namespace);
  await waitForGone(client, "v1", "Service", namespace, "db-pods");
  const { metadata } = current;
  await client.apply(
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: {
        name: "db",
        namespace,
        ...(metadata.labels ? { labels: metadata.labels } : {}),
        ...(metadata.ownerReferences ? { ownerReferences: metadata.ownerReferences } : {}),
      },
      spec: { ...current.spec, serviceName: "db" },
    },
    { fieldManager: "myapp-operator", force: true },
  );
  await waitFor("the old-style StatefulSet to adopt the pods", async () => {
    const old = await client.get<StatefulSet>("apps/v1", "StatefulSet", "db", namespace);
    return old.status?.readyReplicas === replicas ? old : undefined;
  });
  const selector = ready.status?.selector ?? "";
  const podsBefore = (await podsOf(client, namespace, selector)).pods.map((pod) => pod.metadata.uid).sort();
  assert.equal(podsBefore.length, replicas);
  const clusterIpBefore = (await client.get<Service>("v1", "Service", "db", namespace)).spec.clusterIP;

  // WHEN the current operator starts (every status write from now on is recorded)
  const recording = await recordInstance(client, namespace, "db", t);
  await startOperator(t, { namespaces: [namespace], label: "second" });

  // THEN the StatefulSet is governed by the headless Service, and the instance is Ready again
  const moved = await waitFor("the StatefulSet to be governed by db-pods with its pods ready", async () => {
    const live = await client.find<StatefulSet>("apps/v1", "StatefulSet", "db", namespace);
    return live?.spec.serviceName === "db-pods" && live.status?.readyReplicas === replicas ? live : undefined;
  });
  assert.notEqual(moved.metadata.uid, current.metadata.uid, "re-created");
  const readyAgain = await waitForInstance(client, namespace, "db", "Ready again", isReadyAtSpec);
  await recording.stop(readyAgain);
  const headless = await client.get<Service>("v1", "Service", "db-pods", namespace);
  assert.equal(headless.spec.clusterIP, "None");

  // and nothing stopped serving: the same pods, the same ClusterIP, never fewer ready replicas reported
  const podsAfter = (await podsOf(client, namespace, selector)).pods.map((pod) => pod.metadata.uid).sort();
  assert.deepEqual(podsAfter, podsBefore, "the pods were kept and adopted, not replaced");
  assert.equal((await client.get<Service>("v1", "Service", "db", namespace)).spec.clusterIP, clusterIpBefore);
  const samples = recording.versions.map((v) => v.status?.readyReplicas ?? 0);
  t.diagnostic(`readyReplicas during the move: ${samples.join(", ")}`);
  const steps = recording.versions.map((v) => {
    const progressing = v.status?.conditions?.find((c) => c.type === "Progressing");
    return `${v.status?.readyReplicas ?? 0}/${v.status?.replicas ?? 0} ${progressing?.status}:${progressing?.reason} ${v.status?.message}`;
  });
  t.diagnostic(`statuses during the move:\n${steps.join("\n")}`);
  assert.ok(samples.length > 0, "the move was recorded");
  assert.ok(
    samples.every((n) => n >= replicas),
    `readyReplicas stayed at ${replicas}: ${samples.join(", ")}`,
  );
});
