/**
 * The two lists a reconcile reads from the apiserver rather than the cache, filled by a tenant: the claims of the
 * namespace (read when an instance with storage is deleted) and the Events of a StatefulSet that misses pods. A
 * claim's `spec.selector` and a core Event's message are bounded only by the object's size, and the built-in `edit`
 * role may create both. Read whole, 130 objects of 1.2 MB killed an operator on a 128 MiB heap ("JavaScript heap out
 * of memory"), and the next one the same way, as long as they lived. Now each list is read item by item and kept in
 * the fields the reconcile reads (operator/reconcile/live-lists.ts): the deletion completes, and the StatefulSet's
 * real failure is still found among the tenant's forged Events.
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
/** Objects of ~1.2 MB each: together above the operator's heap below. */
const count = 130;
const smallHeap = { NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1" };
const minutes = (n: number) => n * 60_000;

/** Creates `count` objects made by `make(i)`, five at a time. */
async function createMany(make: (i: number) => KubeObject): Promise<void> {
  for (let i = 0; i < count; i += 5) {
    await Promise.all([0, 1, 2, 3, 4].filter((j) => i + j < count).map((j) => client.create(make(i + j))));
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
  "a StatefulSet's failure to create pods is found among a tenant's megabyte Events",
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

    // THEN it answers, Degraded with the controller's own reason (the tenant's were not parsed), and the operator lives
    const answered = await Promise.race([
      waitForInstance(
        client,
        namespace,
        "db",
        "the request answered, Degraded with FailedCreate",
        (instance) =>
          instance.status?.lastHandledReconcileAt === "after-the-tenant-events" &&
          conditionOf(instance, "Degraded")?.reason === "FailedCreate",
        minutes(5),
      ),
      exited,
    ]);
    assert.match(conditionOf(answered, "Degraded")?.message ?? "", /exceeded quota/);
    assert.doesNotMatch(conditionOf(answered, "Degraded")?.message ?? "", /xxxx/);
    assert.equal(operator.process.exitCode, null, "the operator is still running");
  },
);
