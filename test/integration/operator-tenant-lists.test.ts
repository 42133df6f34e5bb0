/**
 * The two lists a reconcile reads from the apiserver rather than the cache, filled by a tenant: the claims of the
 * namespace (read when an instance with storage is deleted) and the Events of a StatefulSet that misses pods. A
 * claim's `spec.selector` and a core Event's message are bounded only by the object's size, and the built-in `edit`
 * role may create both. Read whole, 130 objects of 1.2 MB killed an operator on a 128 MiB heap ("JavaScript heap out
 * of memory"), and the next one the same way, as long as they lived. Now each list is read item by item, a page at a
 * time, and kept in the fields the reconcile reads (operator/reconcile/live-lists.ts): the deletion completes. The
 * Events are read every few seconds while pods are missing, so what such a list may read is bounded too (1 MiB):
 * megabyte Events, which no controller writes, make the instance `EventsTooLarge`, looked at again in minutes, where
 * each read of them had cost the apiserver all they weigh.
 *
 * The real cluster and operator process. Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiVersion, kind, workloadName } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, kubectl, testNamespace, waitFor } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  ensureCrd,
  exitOf,
  isReadyAtSpec,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";

const client = adminClient();
/**
 * Objects of ~1.2 MB each. 130 Events; 40 claims (48 MB: within what a live list may read, 64 MiB, and parsed whole
 * about five times that, well above the operator's heap below).
 */
const count = 130;
const claimCount = 40;
const smallHeap = { NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1" };
const minutes = (n: number) => n * 60_000;

/** Creates `n` objects made by `make(i)`, five at a time. */
async function createMany(make: (i: number) => KubeObject, n = count): Promise<void> {
  for (let i = 0; i < n; i += 5) {
    await Promise.all([0, 1, 2, 3, 4].filter((j) => i + j < n).map((j) => client.create(make(i + j))));
  }
}

test(
  "a deleted instance's claims, among a tenant's megabyte claims, are read and the deletion completes",
  { timeout: minutes(15) },
  async (t) => {
    await ensureCrd(client);
    const namespace = await testNamespace(t, client, "tenant-claims");
    const operator = await startOperator(t, { namespaces: [namespace], leaderElection: false, env: smallHeap });
    const exited = exitOf(operator);
    await createInstance(client, namespace, "db", { image: "postgres:17", storage: "1Gi" });
    await Promise.race([waitForInstance(client, namespace, "db", "Ready", isReadyAtSpec, minutes(5)), exited]);

    // GIVEN claims of the tenant's own, each 1.2 MB of selector values (a storage class nothing provisions)
    const values = Array.from({ length: 18_000 }, (_, i) => `v${String(i).padStart(6, "0")}${"a".repeat(55)}`);
    await createMany(
      (i) =>
        ({
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: `tenant-${i}`, namespace },
          spec: {
            accessModes: ["ReadWriteOnce"],
            storageClassName: "no-such-class",
            resources: { requests: { storage: "1Mi" } },
            selector: { matchExpressions: [{ key: "k", operator: "In", values }] },
          },
        }) as KubeObject,
      claimCount,
    );

    // WHEN the instance is deleted (its finalizer reads every claim of the namespace)
    await client.delete(apiVersion, kind, "db", namespace);

    // THEN the operator finalizes it, and lives
    await Promise.race([
      waitFor(
        "db to be finalized",
        async () => ((await client.find(apiVersion, kind, "db", namespace)) ? undefined : true),
        {
          timeoutMs: minutes(5),
        },
      ),
      exited,
    ]);
    assert.equal(operator.process.exitCode, null, "the operator is still running");
  },
);

test(
  "a tenant's megabyte Events about a StatefulSet that misses pods are named, not read every few seconds",
  { timeout: minutes(15) },
  async (t) => {
    await ensureCrd(client);
    const namespace = await testNamespace(t, client, "tenant-events");
    // GIVEN a quota of no pods, so the StatefulSet's controller fails to create them (a FailedCreate Event)
    const statefulSet = workloadName("db");
    await kubectl("create", "quota", "no-pods", "--hard=pods=0", "-n", namespace);
    await waitFor(`ResourceQuota ${namespace}/no-pods enforced`, async () =>
      (await kubectl("get", "quota", "no-pods", "-n", namespace, "-o", "jsonpath={.status.hard.pods}")) === "0"
        ? true
        : undefined,
    );
    const operator = await startOperator(t, { namespaces: [namespace], leaderElection: false, env: smallHeap });
    const exited = exitOf(operator);
    await createInstance(client, namespace, "db", { image: "postgres:17", storage: "1Gi" });
    const live = await Promise.race([
      waitFor("the StatefulSet", () => client.find<KubeObject>("apps/v1", "StatefulSet", statefulSet, namespace), {
        timeoutMs: minutes(2),
      }),
      exited,
    ]);

    // AND Events of the tenant's about that StatefulSet, 1.2 MB of message each
    const message = "x".repeat(1_200_000);
    const now = new Date().toISOString();
    await createMany(
      (i) =>
        ({
          apiVersion: "v1",
          kind: "Event",
          metadata: { name: `tenant-${i}`, namespace },
          involvedObject: {
            apiVersion: "apps/v1",
            kind: "StatefulSet",
            name: statefulSet,
            namespace,
            uid: live.metadata.uid,
          },
          reason: "FailedCreate",
          message,
          type: "Warning",
          source: { component: "tenant" },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        }) as KubeObject,
    );

    // WHEN a reconcile is asked for after they exist
    await client.mergePatch(apiVersion, kind, "db", namespace, {
      metadata: { annotations: { "myapp.example.com/reconcile-requested-at": "after-the-tenant-events" } },
    });

    // THEN it answers, Degraded naming the Events and how to list them (none of them parsed), and the operator lives
    const answered = await Promise.race([
      waitForInstance(
        client,
        namespace,
        "db",
        "the request answered, Degraded with EventsTooLarge",
        (instance) =>
          instance.status?.lastHandledReconcileAt === "after-the-tenant-events" &&
          conditionOf(instance, "Degraded")?.reason === "EventsTooLarge",
        minutes(5),
      ),
      exited,
    ]);
    const said = conditionOf(answered, "Degraded")?.message ?? "";
    assert.match(said, /Event objects of namespace .* take more than 1 MiB to read/);
    assert.ok(said.includes(`--field-selector involvedObject.uid=${live.metadata.uid ?? ""}`), said);
    assert.doesNotMatch(said, /xxxx/);
    assert.equal(operator.process.exitCode, null, "the operator is still running");

    // AND when the tenant deletes them, the next look finds the controller's own reason (a change wakes it at once)
    for (let i = 0; i < count; i++) await client.delete("v1", "Event", `tenant-${i}`, namespace);
    await client.mergePatch(apiVersion, kind, "db", namespace, {
      metadata: { annotations: { "myapp.example.com/reconcile-requested-at": "after-the-deletion" } },
    });
    const found = await Promise.race([
      waitForInstance(
        client,
        namespace,
        "db",
        "Degraded with FailedCreate",
        (instance) =>
          instance.status?.lastHandledReconcileAt === "after-the-deletion" &&
          conditionOf(instance, "Degraded")?.reason === "FailedCreate",
        minutes(5),
      ),
      exited,
    ]);
    assert.match(conditionOf(found, "Degraded")?.message ?? "", /exceeded quota/);
  },
);
