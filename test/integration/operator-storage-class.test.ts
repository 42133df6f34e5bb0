/**
 * An instance whose spec.storageClassName names a StorageClass that does not exist, with the operator process on
 * the local cluster. The apiserver accepts it (a class may be created later), but nothing can provision its
 * volumes, so its claim and pod stay Pending. The operator says so: Degraded (and Stalled) with reason
 * StorageClassNotFound, without a hot loop, while a healthy instance next to it still becomes Ready. Once the
 * class exists and a volume is there, the instance recovers by itself (the operator polls for the class, as
 * nothing it watches changes when a class is created) and becomes Ready.
 *
 * The local provisioner (tools/provisioner.ts) serves only the class named "local", so after creating the class
 * the test acts as that class's provisioner: it creates a PersistentVolume bound to the waiting claim. The class
 * and the volume are cluster-scoped, uniquely named, and deleted at the end.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  getInstance,
  isCurrent,
  isReadyAtSpec,
  startOperator,
  waitForInstance,
  reconcileChanged,
} from "../support/operator.ts";

const client = adminClient();

type Claim = Typed<{ spec?: { storageClassName?: string }; status?: { phase?: string } }>;

test("an instance whose StorageClass does not exist goes Degraded, and recovers once the class exists", async (t) => {
  const namespace = await testNamespace(t, client, "op-sc");
  const storageClassName = `myapp-test-late-${namespace}`;
  const volumeName = `myapp-test-${namespace}-waiting-0`;
  // Registered first, so they run after the operator has stopped and whether or not the test got that far.
  t.after(() => client.delete("v1", "PersistentVolume", volumeName).then(() => undefined));
  t.after(() => client.delete("storage.k8s.io/v1", "StorageClass", storageClassName).then(() => undefined));
  const operator = await startOperator(t, { namespaces: [namespace] });

  // WHEN an instance names a StorageClass that does not exist
  const created = await createInstance(client, namespace, "waiting", {
    replicas: 1,
    image: "postgres:17",
    storage: "1Gi",
    storageClassName,
  });

  // THEN it goes Degraded (and Stalled), naming the class and what to do (once the StatefulSet controller made the
  // claim: a busy machine's controllers may take a while)
  const degraded = await waitForInstance(
    client,
    namespace,
    "waiting",
    "Degraded",
    (i) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True",
    120_000,
  );
  assert.equal(degraded.metadata.generation, created.metadata.generation);
  const condition = conditionOf(degraded, "Degraded")!;
  assert.equal(condition.reason, "StorageClassNotFound");
  assert.match(condition.message ?? "", new RegExp(`^StorageClass "${storageClassName}" does not exist`));
  assert.match(condition.message ?? "", /data-waiting-0/);
  assert.match(condition.message ?? "", new RegExp(`Create StorageClass "${storageClassName}"`));
  assert.match(condition.message ?? "", /spec\.storageClassName cannot change once spec\.storage is set/);
  assert.equal(conditionOf(degraded, "Stalled")?.status, "True");
  assert.equal(conditionOf(degraded, "Ready")?.status, "False");
  assert.equal(degraded.status?.phase, "Degraded");
  // and its claim does wait: the StatefulSet was applied all the same, so the claim binds once the class exists
  const claim = await waitFor("claim data-waiting-0 to exist", () =>
    client.find<Claim>("v1", "PersistentVolumeClaim", "data-waiting-0", namespace),
  );
  assert.equal(claim.spec?.storageClassName, storageClassName);
  assert.equal(claim.status?.phase, "Pending");

  // WHEN a healthy instance with storage on the cluster's default class is created next to it
  await createInstance(client, namespace, "healthy", { replicas: 1, image: "postgres:17", storage: "1Gi" });

  // THEN that one becomes Ready
  await waitForInstance(client, namespace, "healthy", "Ready", isReadyAtSpec);

  // and the waiting one is still Degraded, looked at again by a slow poll that writes nothing (no hot loop)
  const key = `${namespace}/waiting`;
  const nextPoll = () => {
    const mark = operator.logs.length;
    return operator.waitForLog(
      (line) => line.key === key && line.msg === "reconciled" && operator.logs.indexOf(line) >= mark,
      { timeoutMs: 90_000, what: "the next poll of the waiting instance" },
    );
  };
  // Progress (its StatefulSet's counts) that pacing held back (status-pacing.ts) goes out at the first look.
  if ((await nextPoll()).writes !== 0) await nextPoll();
  const before = await getInstance(client, namespace, "waiting");
  assert.equal(conditionOf(before, "Degraded")?.reason, "StorageClassNotFound");
  const poll = await nextPoll();
  assert.equal(poll.result, "requeue_after", JSON.stringify(poll));
  assert.equal(poll.requeueAfterMs, 30_000, "a slow poll for the class");
  assert.equal(poll.writes, 0);
  const after = await getInstance(client, namespace, "waiting");
  assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, "no status write");
  const firstDegraded = operator.logs.findIndex(
    (line) => line.key === key && reconcileChanged(line, "status Degraded"),
  );
  const since = operator.logs.slice(firstDegraded).filter((line) => line.key === key && line.msg === "reconciled");
  // At most 8, or, when this took longer on a busy machine, a few for changes of its children and one per slow poll
  // (30 s) in the time it took; a retry loop's backoff makes many more
  const sinceMs = Number(poll["time"]) - Number(operator.logs[firstDegraded]?.["time"]);
  t.diagnostic(
    `reconciles of the waiting instance in the ${Math.round(sinceMs / 1000)} s since Degraded: ${since.length}`,
  );
  const allowed = Math.max(8, 4 + Math.ceil(sinceMs / 30_000));
  assert.ok(since.length <= allowed, `not retried in a loop (${since.length} reconciles)`);
  assert.equal(
    operator.logs.some((line) => line.key === key && Number(line.level) >= 50),
    false,
    "reported on the status, not logged as an error",
  );

  // WHEN the class is created, and (as its provisioner) a volume for the waiting claim
  await client.create({
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: storageClassName },
    provisioner: "kubernetes.io/no-provisioner",
    volumeBindingMode: "Immediate",
  });
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
      claimRef: { namespace, name: "data-waiting-0" },
    },
  });

  // THEN the instance recovers by itself, without any change to it: Degraded clears and it becomes Ready
  const ready = await waitForInstance(
    client,
    namespace,
    "waiting",
    "Ready after the class was created",
    isReadyAtSpec,
    120_000,
  );
  assert.equal(ready.metadata.generation, created.metadata.generation, "the instance was not touched");
  assert.equal(conditionOf(ready, "Degraded")?.status, "False");
  assert.equal(conditionOf(ready, "Stalled"), undefined);
  assert.equal(ready.status?.readyReplicas, 1);
  const boundClaim = await client.get<Claim>("v1", "PersistentVolumeClaim", "data-waiting-0", namespace);
  assert.equal(boundClaim.status?.phase, "Bound");
});
