/**
 * An impossible spec, with the operator process on the local cluster: the apiserver accepts it (the schema cannot
 * know), but the operator cannot realise it. Here: growing spec.storage when the volumes' StorageClass does not
 * allow volume expansion. The instance goes Degraded with reason StorageExpansionUnsupported, keeps serving on
 * its old volumes, is not retried in a loop, and a healthy instance in the same namespace still becomes Ready.
 *
 * The StorageClass (allowVolumeExpansion: false) and a statically provisioned volume for its claim are created
 * by the test (cluster-scoped, uniquely named) and deleted at its end.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { adminClient, testNamespace, type Typed } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  isReadyAtSpec,
  patchSpec,
  startOperator,
  waitForInstance,
  type Instance,
  reconcileChanged,
} from "../support/operator.ts";

const client = adminClient();

type Claim = Typed<{
  spec?: { resources?: { requests?: { storage?: string } } };
  status?: { phase?: string };
}>;

test("an instance whose volumes cannot grow goes Degraded; a healthy one next to it still becomes Ready", async (t) => {
  const namespace = await testNamespace(t, client, "op-degraded");
  const storageClassName = `myapp-test-fixed-${namespace}`;
  await client.create({
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: storageClassName },
    provisioner: "kubernetes.io/no-provisioner",
    volumeBindingMode: "Immediate",
    allowVolumeExpansion: false,
  });
  t.after(() => client.delete("storage.k8s.io/v1", "StorageClass", storageClassName).then(() => undefined));
  // A volume made by hand for the claim the StatefulSet will make, as an administrator would for a static class.
  const volumeName = `myapp-test-${namespace}-stuck-0`;
  await client.create({
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: volumeName },
    spec: {
      capacity: { storage: "1Gi" },
      accessModes: ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Retain",
      storageClassName,
      hostPath: { path: `/var/lib/myapp-test/${volumeName}` },
      claimRef: { namespace, name: "data-stuck-0" },
    },
  });
  t.after(() => client.delete("v1", "PersistentVolume", volumeName).then(() => undefined));
  const operator = await startOperator(t, { namespaces: [namespace] });

  await createInstance(client, namespace, "stuck", {
    replicas: 1,
    image: "postgres:17",
    storage: "1Gi",
    storageClassName,
  });
  await waitForInstance(client, namespace, "stuck", "Ready on its static volume", isReadyAtSpec);
  const statefulSetBefore = await client.get("apps/v1", "StatefulSet", "stuck", namespace);

  // WHEN its storage is grown, which its StorageClass does not allow
  const patched = await patchSpec(client, namespace, "stuck", { storage: "2Gi" });

  // THEN it goes Degraded (and Stalled) with the reason, naming the class and the claim
  const degraded = await waitForInstance(
    client,
    namespace,
    "stuck",
    "Degraded for the new spec",
    (i) =>
      i.status?.observedGeneration === patched.metadata.generation && conditionOf(i, "Degraded")?.status === "True",
  );
  const condition = conditionOf(degraded, "Degraded")!;
  assert.equal(condition.reason, "StorageExpansionUnsupported");
  assert.match(condition.message ?? "", new RegExp(`StorageClass "${storageClassName}"`));
  assert.match(condition.message ?? "", /data-stuck-0/);
  assert.match(condition.message ?? "", /does not allow volume expansion/);
  assert.equal(conditionOf(degraded, "Stalled")?.status, "True");
  assert.equal(conditionOf(degraded, "Ready")?.status, "False");
  assert.equal(degraded.status?.phase, "Degraded");
  // and nothing was changed: it keeps serving on its old volume
  assert.equal(degraded.status?.readyReplicas, 1);
  const claim = await client.get<Claim>("v1", "PersistentVolumeClaim", "data-stuck-0", namespace);
  assert.equal(claim.spec?.resources?.requests?.storage, "1Gi");
  assert.equal(claim.status?.phase, "Bound");
  const statefulSetAfter = await client.get("apps/v1", "StatefulSet", "stuck", namespace);
  assert.equal(statefulSetAfter.metadata.uid, statefulSetBefore.metadata.uid, "the StatefulSet was not re-created");

  // WHEN a healthy instance is created next to it THEN that one becomes Ready, and can be scaled
  await createInstance(client, namespace, "healthy", { replicas: 1, image: "nginx:1.27" });
  await waitForInstance(client, namespace, "healthy", "Ready", isReadyAtSpec);
  await patchSpec(client, namespace, "healthy", { replicas: 2 });
  await waitForInstance(client, namespace, "healthy", "Ready with 2 replicas", isReadyAtSpec);

  // and the degraded one is still Degraded, written once: its later reconciles wrote nothing (no hot loop)
  const still: Instance = await waitForInstance(
    client,
    namespace,
    "stuck",
    "still Degraded",
    (i) => conditionOf(i, "Degraded")?.status === "True",
  );
  assert.equal(still.metadata.resourceVersion, degraded.metadata.resourceVersion, "no status write since");
  const stuckKey = `${namespace}/stuck`;
  const degradedAt = operator.logs.findIndex(
    (line) => line.key === stuckKey && reconcileChanged(line, "status Degraded"),
  );
  assert.ok(degradedAt >= 0, "the operator logged the Degraded status");
  const later = operator.logs.slice(degradedAt).filter((line) => line.key === stuckKey && line.msg === "reconciled");
  t.diagnostic(`reconciles of the degraded instance since: ${later.length}`);
  assert.ok(later.length <= 5, `not retried in a loop (${later.length} reconciles)`);
  assert.ok(
    later.slice(1).every((line) => line.writes === 0),
    `writes: ${later.map((l) => l.writes).join(",")}`,
  );
  assert.equal(
    operator.logs.some((line) => line.key === stuckKey && Number(line.level) >= 50),
    false,
    "a Degraded instance is reported on its status, not logged as an error",
  );
});
