/**
 * The volume claims of a chart's StatefulSet when its instance goes, against the real StatefulSet controller and
 * garbage collector: kept under `storageReclaimPolicy: Retain` (also after a scale-down under Delete and a change to
 * Retain, which leaves the scaled-down claim owned by the StatefulSet), gone with the StatefulSet under Delete. And
 * while it lives: the claims of replicas scaled away, which the operator keeps, count against the namespace's
 * storage budget until deleted.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import { platformWebhooks } from "../support/platform-webhooks.ts";
import {
  createInstance,
  isReadyAtSpec,
  conditionOf,
  isCurrent,
  patchSpec,
  startOperator,
  waitForGone,
  waitForInstance,
} from "../support/operator.ts";

const client = adminClient();
const chartSource = path.resolve(import.meta.dirname, "../../examples/charts/myapp");
const minutes = (n: number) => n * 60_000;

test("a chart's claims: kept under Retain (also after Delete, a scale-down and back to Retain), gone under Delete", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-claims");
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "myapp-chart", namespace },
    binaryData: { "chart.tgz": (await packChart(chartSource)).toString("base64") },
  });
  const operator = await startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });
  const ready = (name: string, what: string) =>
    waitForInstance(client, namespace, name, what, isReadyAtSpec, minutes(3)).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${operator.logTail()}`);
    });
  const persistent = (replicas: number, storageReclaimPolicy: "Retain" | "Delete") => ({
    image: "nginx:1.27",
    replicas,
    storage: "1Gi",
    storageReclaimPolicy,
    chart: { configMap: "myapp-chart", valuePaths: { storage: "persistence.size" } },
    values: { persistence: { enabled: true } },
  });
  const claim = (name: string) => client.find<KubeObject>("v1", "PersistentVolumeClaim", name, namespace);
  const claimed = (name: string) => waitFor(`claim ${name}`, () => claim(name), { timeoutMs: minutes(2) });

  // GIVEN three chart instances with volumes: "kept" (Retain), "dropped" (Delete), and "switched" (Delete, scaled
  // from 2 to 1, then Retain: its claim 1 stays owned by the StatefulSet, whose pod 1 is gone)
  await createInstance(client, namespace, "kept", persistent(1, "Retain"));
  await createInstance(client, namespace, "dropped", persistent(1, "Delete"));
  await createInstance(client, namespace, "switched", persistent(2, "Delete"));
  for (const name of ["kept", "dropped", "switched"]) await ready(name, "Ready on the chart");
  for (const name of ["data-kept-0", "data-dropped-0", "data-switched-0", "data-switched-1"]) await claimed(name);
  await waitFor(
    "claim data-switched-1 owned by its StatefulSet (whenDeleted: Delete)",
    async () => ((await claim("data-switched-1"))?.metadata.ownerReferences ?? []).length > 0 || undefined,
    { timeoutMs: minutes(2) },
  );
  await patchSpec(client, namespace, "switched", { replicas: 1 });
  await ready("switched", "Ready at 1 replica");
  await patchSpec(client, namespace, "switched", { storageReclaimPolicy: "Retain" });
  await ready("switched", "Ready under Retain");

  // WHEN all three are deleted
  for (const name of ["kept", "dropped", "switched"]) await client.delete(apiVersion, kind, name, namespace);
  for (const name of ["kept", "dropped", "switched"]) {
    await waitForGone(client, apiVersion, kind, namespace, name, minutes(3));
    await waitForGone(client, "apps/v1", "StatefulSet", namespace, name, minutes(3));
  }

  // THEN the Retain instances' claims are kept, owned by nothing that would delete them, and Delete's goes
  await waitForGone(client, "v1", "PersistentVolumeClaim", namespace, "data-dropped-0", minutes(3));
  for (const name of ["data-kept-0", "data-switched-0", "data-switched-1"]) {
    const kept = await claim(name);
    assert.ok(kept && kept.metadata.deletionTimestamp === undefined, `${name} is kept`);
    assert.deepEqual(kept.metadata.ownerReferences ?? [], [], `${name} is owned by nothing`);
  }
});

test("a chart's claims of replicas scaled away count against the namespace's storage budget until deleted", async (t) => {
  // GIVEN a namespace that may hold 4Gi, with the platform's webhooks, and an operator that renders charts
  const namespace = await testNamespace(t, client, "op-chart-claims-budget");
  await client.mergePatch("v1", "Namespace", namespace, undefined, {
    metadata: { labels: { "myapp.example.com/max-storage": "4Gi" } },
  });
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "myapp-chart", namespace },
    binaryData: { "chart.tgz": (await packChart(chartSource)).toString("base64") },
  });
  const webhooks = await platformWebhooks(t, client, { watchNamespaces: [namespace] });
  // (a refusal for want of room is looked at again in the slow lane: every 10 s here, not 5 min)
  const operator = await startOperator(t, {
    namespaces: [namespace],
    args: [`--helm=${await helmBinary()}`, "--slow-retry-interval=10", ...webhooks.flags],
  });
  const until = (name: string, what: string, done: Parameters<typeof waitForInstance>[4]) =>
    waitForInstance(client, namespace, name, what, done, minutes(3)).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${operator.logTail()}`);
    });
  // The chart sizes its volumes (1Gi a replica) where the spec does not: admission sees no storage in the spec.
  const withVolumes = (replicas: number) => ({
    image: "nginx:1.27",
    replicas,
    chart: { configMap: "myapp-chart" },
    values: { persistence: { enabled: true, size: "1Gi" } },
  });
  const claimNames = async () =>
    (await client.list<KubeObject>("v1", "PersistentVolumeClaim", { namespace })).items
      .filter((claim) => claim.metadata.deletionTimestamp === undefined)
      .map((claim) => claim.metadata.name ?? "")
      .sort();
  const claimsOfA = ["data-a-0", "data-a-1", "data-a-2", "data-a-3"];
  await createInstance(client, namespace, "a", withVolumes(4));
  await until("a", "Ready at 4 replicas", isReadyAtSpec);
  await waitFor("a's 4 claims", async () => (await claimNames()).length === claimsOfA.length || undefined, {
    timeoutMs: minutes(2),
  });

  // WHEN it is scaled to 1 (its claims stay), then back to 4
  await patchSpec(client, namespace, "a", { replicas: 1 });
  await until("a", "Ready at 1 replica", isReadyAtSpec);
  assert.deepEqual(await claimNames(), claimsOfA);
  await patchSpec(client, namespace, "a", { replicas: 4 });
  // THEN it runs 4 again: its own claims count once
  await until("a", "Ready at 4 replicas again", isReadyAtSpec);
  await patchSpec(client, namespace, "a", { replicas: 1 });
  await until("a", "Ready at 1 replica again", isReadyAtSpec);

  // WHEN another chart instance renders 2Gi
  await createInstance(client, namespace, "b", withVolumes(2));
  // THEN its render is refused: a's claims hold the 4Gi, though a's render takes 1Gi
  const refused = await until(
    "b",
    "refused for the claims a kept",
    (instance) => isCurrent(instance) && conditionOf(instance, "Degraded")?.reason === "ChartOverBudget",
  );
  assert.match(conditionOf(refused, "Degraded")?.message ?? "", /it uses 4Gi without this instance/);
  assert.equal(await client.find("apps/v1", "StatefulSet", "b", namespace), undefined);
  // AND an instance whose spec asks for 1Gi is refused at the door, naming the claims
  await assert.rejects(
    createInstance(client, namespace, "c", { image: "nginx:1.27", storage: "1Gi" }),
    /data-a-1.*data-a-3|data-a-3.*data-a-1/s,
  );

  // WHEN the claims of a's replicas scaled away are deleted THEN b runs
  for (const name of claimsOfA.slice(1)) await client.delete("v1", "PersistentVolumeClaim", name, namespace);
  await until("b", "Ready once the claims were deleted", isReadyAtSpec);
});
