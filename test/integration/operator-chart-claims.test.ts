/**
 * The volume claims of a chart's StatefulSet when its instance goes, against the real StatefulSet controller and
 * garbage collector: kept under `storageReclaimPolicy: Retain` (also after a scale-down under Delete and a change to
 * Retain, which leaves the scaled-down claim owned by the StatefulSet), gone with the StatefulSet under Delete.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import {
  createInstance,
  isReadyAtSpec,
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
