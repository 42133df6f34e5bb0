/**
 * Storage with the operator process on the local cluster (whose default StorageClass is served by the local
 * provisioner): an instance with spec.storage runs a StatefulSet whose claims are Bound; deleting it removes its
 * children and its finalizer but keeps the claims (storageReclaimPolicy defaults to Retain), and a later instance of
 * its name on Delete deletes only the claims it made; adding storage to a
 * running instance moves it from a Deployment to a StatefulSet without its ready replicas ever dropping.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  isReadyAtSpec,
  patchSpec,
  podsOf,
  recordInstance,
  startOperator,
  waitForGone,
  waitForInstance,
} from "../support/operator.ts";
import { byCodeUnits } from "../../api/code-unit-order.ts";
import { helmBinary, packChart } from "../support/helm.ts";

const client = adminClient();
const chartDir = path.resolve(import.meta.dirname, "../../examples/charts/myapp");

type Claim = Typed<{
  spec?: { resources?: { requests?: { storage?: string } } };
  status?: { phase?: string; capacity?: { storage?: string } };
}>;
type StatefulSet = Typed<{
  spec?: { replicas?: number; volumeClaimTemplates?: { spec?: { resources?: { requests?: { storage?: string } } } }[] };
}>;

const claimNames = ["data-db-0", "data-db-1"];

async function claims(namespace: string): Promise<Claim[]> {
  const { items } = await client.list<Claim>("v1", "PersistentVolumeClaim", { namespace });
  return items.filter((claim) => claimNames.includes(claim.metadata.name ?? "")).sort(byName);
}

function byName(a: Claim, b: Claim): number {
  return byCodeUnits(a.metadata.name ?? "", b.metadata.name ?? "");
}

test("an instance with storage runs a StatefulSet with Bound claims; deleting it keeps the claims, which a namesake on Delete does not take", async (t) => {
  const namespace = await testNamespace(t, client, "op-storage");
  const operator = await startOperator(t, { namespaces: [namespace] });

  // WHEN an instance asks for storage
  await createInstance(client, namespace, "db", { replicas: 2, image: "postgres:17", storage: "1Gi" });

  // THEN it becomes Ready on a StatefulSet (no Deployment), with one Bound 1Gi claim per replica
  const ready = await waitForInstance(client, namespace, "db", "Ready", isReadyAtSpec);
  assert.equal(ready.status?.readyReplicas, 2);
  const statefulSet = await client.get<StatefulSet>("apps/v1", "StatefulSet", "db", namespace);
  assert.equal(statefulSet.spec?.replicas, 2);
  assert.equal(statefulSet.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage, "1Gi");
  assert.equal(await client.find("apps/v1", "Deployment", "db", namespace), undefined);
  const bound = await waitFor("both claims Bound", async () => {
    const found = await claims(namespace);
    return found.length === 2 && found.every((claim) => claim.status?.phase === "Bound") ? found : undefined;
  });
  assert.deepEqual(
    bound.map((claim) => [claim.metadata.name, claim.status?.capacity?.storage]),
    [
      ["data-db-0", "1Gi"],
      ["data-db-1", "1Gi"],
    ],
  );
  assert.equal((await podsOf(client, namespace, ready.status?.selector ?? "")).ready, 2);

  // WHEN the instance is deleted
  assert.equal(await client.delete(apiVersion, kind, "db", namespace), true);

  // THEN the operator removes its finalizer, so the instance goes, after deleting the children
  await waitForGone(client, apiVersion, kind, namespace, "db");
  const finalized = await operator.waitForLog((line) => line.msg === "finalized" && line.key === `${namespace}/db`, {
    what: '"finalized" line',
  });
  assert.equal(finalized.claimsKept, 2);
  await waitForGone(client, "apps/v1", "StatefulSet", namespace, "db");
  await waitForGone(client, "v1", "Service", namespace, "db");
  // and the claims (and their data) stay, Bound, not being deleted
  const kept = await claims(namespace);
  assert.deepEqual(
    kept.map((claim) => [claim.metadata.name, claim.status?.phase, claim.metadata.deletionTimestamp]),
    [
      ["data-db-0", "Bound", undefined],
      ["data-db-1", "Bound", undefined],
    ],
  );
  assert.deepEqual(
    kept.map((claim) => claim.metadata.uid),
    bound.map((claim) => claim.metadata.uid),
    "the same claims, not new ones",
  );

  // WHEN a new instance of the same name, on storageReclaimPolicy Delete, mounts them again, makes a third, and is
  // deleted (a whole second after they were made: creation times are in seconds)
  const madeAt = Math.max(...kept.map((claim) => Date.parse(claim.metadata.creationTimestamp ?? "")));
  await waitFor("a second after the kept claims were made", async () =>
    Date.now() >= madeAt + 1000 ? true : undefined,
  );
  await createInstance(client, namespace, "db", {
    replicas: 3,
    image: "postgres:17",
    storage: "1Gi",
    storageReclaimPolicy: "Delete",
  });
  await waitForInstance(client, namespace, "db", "Ready again", isReadyAtSpec);
  const third = await client.get<Claim>("v1", "PersistentVolumeClaim", "data-db-2", namespace);
  assert.equal(await client.delete(apiVersion, kind, "db", namespace), true);
  await waitForGone(client, apiVersion, kind, namespace, "db");

  // THEN the claim it made goes, and the earlier instance's two stay with their data, a Warning naming them
  await waitFor("data-db-2 deleted", async () => {
    const found = await client.find<Claim>("v1", "PersistentVolumeClaim", "data-db-2", namespace);
    return !found || found.metadata.uid !== third.metadata.uid || found.metadata.deletionTimestamp ? true : undefined;
  });
  const still = await claims(namespace);
  assert.deepEqual(
    still.map((claim) => [claim.metadata.uid, claim.metadata.deletionTimestamp]),
    bound.map((claim) => [claim.metadata.uid, undefined]),
    "the earlier instance's claims are untouched",
  );
  const { items: events } = await client.list<Typed<{ reason?: string; type?: string; message?: string }>>(
    "v1",
    "Event",
    { namespace },
  );
  const retained = events.find((event) => event.reason === "RetainedVolumeClaims" && event.type === "Warning");
  assert.match(
    retained?.message ?? "",
    /Kept volume claims data-db-0, data-db-1 although storageReclaimPolicy is Delete: they are older than this instance/,
  );
});

test("adding storage moves a running instance from a Deployment to a StatefulSet without losing ready replicas", async (t) => {
  const namespace = await testNamespace(t, client, "op-move");
  await startOperator(t, { namespaces: [namespace] });
  const replicas = 2;
  await createInstance(client, namespace, "db", { replicas, image: "postgres:17" });
  await waitForInstance(client, namespace, "db", "Ready on a Deployment", isReadyAtSpec);
  assert.ok(await client.find("apps/v1", "Deployment", "db", namespace));

  // WHEN storage is added (every status write from now on is recorded)
  const recording = await recordInstance(client, namespace, "db", t);
  const patched = await patchSpec(client, namespace, "db", { storage: "1Gi" });
  const ready = await waitForInstance(client, namespace, "db", "Ready on a StatefulSet", isReadyAtSpec);
  await waitForGone(client, "apps/v1", "Deployment", namespace, "db");
  await recording.stop(ready);

  // THEN the instance ends on a StatefulSet with Bound claims, and the Deployment is gone
  assert.equal(ready.status?.readyReplicas, replicas);
  assert.ok(await client.find("apps/v1", "StatefulSet", "db", namespace));
  const bound = await claims(namespace);
  assert.deepEqual(
    bound.map((claim) => [claim.metadata.name, claim.status?.phase]),
    [
      ["data-db-0", "Bound"],
      ["data-db-1", "Bound"],
    ],
  );

  // and while it moved, the instance went through Migrating and never reported fewer ready replicas than desired
  const versions = recording.versions.filter((v) => v.status?.observedGeneration === patched.metadata.generation);
  assert.ok(versions.length >= 2, `status writes for the new spec were recorded (${versions.length})`);
  assert.equal(conditionOf(versions[0]!, "Progressing")?.reason, "Migrating", JSON.stringify(versions[0]!.status));
  const samples = versions.map((v) => v.status?.readyReplicas ?? 0);
  t.diagnostic(`readyReplicas during the move: ${samples.join(", ")}`);
  assert.ok(
    samples.every((n) => n >= replicas),
    `readyReplicas stayed at or above ${replicas}: ${samples.join(", ")}`,
  );
});

test("a chart instance on Delete whose StatefulSet mounted an earlier namesake's kept claim leaves that claim", async (t) => {
  const namespace = await testNamespace(t, client, "op-storage-chart");
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "myapp-chart", namespace },
    binaryData: { "chart.tgz": (await packChart(chartDir)).toString("base64") },
  });
  await startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });

  // GIVEN the claim data-db-0 kept from a built-in instance db (Retain)
  await createInstance(client, namespace, "db", { replicas: 1, image: "postgres:17", storage: "1Gi" });
  await waitForInstance(client, namespace, "db", "Ready", isReadyAtSpec);
  const kept = await waitFor("data-db-0 Bound", async () => {
    const claim = await client.find<Claim>("v1", "PersistentVolumeClaim", "data-db-0", namespace);
    return claim?.status?.phase === "Bound" ? claim : undefined;
  });
  assert.equal(await client.delete(apiVersion, kind, "db", namespace), true);
  await waitForGone(client, apiVersion, kind, namespace, "db");
  const madeAt = Date.parse(kept.metadata.creationTimestamp ?? "");
  await waitFor("a second after the kept claim was made", async () => (Date.now() >= madeAt + 1000 ? true : undefined));

  // WHEN a chart instance db on Delete renders a StatefulSet db with claim template data (it mounts data-db-0 by its
  // name, and its controller makes the StatefulSet own it), and is deleted
  await createInstance(client, namespace, "db", {
    replicas: 1,
    image: "nginx:1.27",
    podSecurityLevel: "Baseline",
    storageReclaimPolicy: "Delete",
    chart: { configMap: "myapp-chart" },
    values: { persistence: { enabled: true } },
  });
  await waitForInstance(client, namespace, "db", "Ready as a chart", isReadyAtSpec);
  assert.ok(await client.find("apps/v1", "StatefulSet", "db", namespace), "the chart runs a StatefulSet db");
  assert.equal(await client.delete(apiVersion, kind, "db", namespace), true);
  await waitForGone(client, apiVersion, kind, namespace, "db");
  await waitForGone(client, "apps/v1", "StatefulSet", namespace, "db");

  // THEN the earlier instance's claim is still there, not being deleted, owned by no one
  const still = await client.find<Claim>("v1", "PersistentVolumeClaim", "data-db-0", namespace);
  assert.equal(still?.metadata.uid, kept.metadata.uid, "the same claim");
  assert.equal(still?.metadata.deletionTimestamp, undefined);
  assert.deepEqual(still?.metadata.ownerReferences ?? [], []);
});
