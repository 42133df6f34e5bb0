/**
 * Instances with long finalizer lists. `metadata.finalizers` is the one field of an instance's metadata the
 * operator reads, and nothing bounds its length but etcd's ~1.5 MiB an object: a tenant who may create instances
 * may give each a megabyte of finalizers of its own. The cache keeps of a list that long only the operator's own
 * finalizer and a count (operator/instance-as-read.ts), and the operator reads such an instance live when it adds
 * or removes its own, sending the one change (operator/reconcile/finalize.ts).
 *
 * The real cluster and operator process, as a ServiceAccount with the component's RBAC (whose role may list
 * instances, not get them), on a heap smaller than the tenant's finalizers (`--max-old-space-size=128`): 110
 * instances with 1.2 MB of finalizers each before it starts (its first list). Kept whole, they killed it with
 * "JavaScript heap out of memory", and again at each restart. Then an instance beside them is Ready, and one of them
 * with storage gets the operator's finalizer and, deleted, loses only that one.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiVersion, finalizer, kind } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import {
  createInstance,
  ensureCrd,
  exitOf,
  isReadyAtSpec,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";
import { componentOperatorIdentity } from "../support/operator-identity.ts";

const client = adminClient();

/** 4,400 finalizers of 265 characters: 1.2 MB of JSON, which the apiserver takes. */
const theirs = Array.from({ length: 4400 }, (_, i) => `${"a".repeat(240)}.example.com/f${String(i).padStart(8, "0")}`);
const count = 110;

test(
  "instances with more finalizers than the operator's heap cost it little, and keep the tenant's finalizers",
  { timeout: 10 * 60_000 },
  async (t) => {
    await ensureCrd(client);
    const namespace = await testNamespace(t, client, "finalizers");
    const withTheirs = (name: string, spec: Record<string, unknown>) =>
      client.create({ apiVersion, kind, metadata: { name, namespace, finalizers: theirs }, spec });
    // Theirs go first when the test ends, or the namespace could never be deleted.
    t.after(async () => {
      const { items } = await client.list<KubeObject>(apiVersion, kind, { namespace });
      for (const item of items) {
        await client.mergePatch(apiVersion, kind, item.metadata.name ?? "", namespace, {
          metadata: { finalizers: null },
        });
      }
    });
    for (let i = 0; i < count; i += 2) {
      await Promise.all([i, i + 1].map((n) => withTheirs(`long-${n}`, { image: "nginx:1.27" })));
    }
    await withTheirs("db", { image: "postgres:17", storage: "1Gi" });

    const identity = await componentOperatorIdentity(t, client, namespace, [
      { verb: "list", group: "example.com", resource: "myappinstances", namespace },
      { verb: "patch", group: "example.com", resource: "myappinstances", namespace },
      { verb: "list", group: "storage.k8s.io", resource: "storageclasses" },
    ]);
    const operator = await startOperator(t, {
      namespaces: [namespace],
      leaderElection: false,
      args: [identity.chartKindsFlag],
      env: { NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1", KUBECONFIG: identity.kubeconfig },
    });
    const exited = exitOf(operator);
    exited.catch(() => {}); // the test stops it in the end
    /** `work`, unless the operator exits first. */
    const alive = <T>(work: Promise<T>) => Promise.race([work, exited]);

    // THEN an instance beside them is served
    await createInstance(client, namespace, "web", { image: "nginx:1.27" });
    await alive(waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec, 300_000));

    // and the one with storage has the operator's finalizer after the tenant's
    const db = await alive(waitForInstance(client, namespace, "db", "Ready", isReadyAtSpec, 300_000));
    assert.deepEqual(db.metadata.finalizers, [...theirs, finalizer]);

    // WHEN it is deleted THEN the operator removes its own finalizer and no other
    await client.delete(apiVersion, kind, "db", namespace);
    const finalized = await alive(
      waitFor(
        "db finalized by the operator",
        async () => {
          const live = await client.get<KubeObject>(apiVersion, kind, "db", namespace);
          return live.metadata.finalizers?.includes(finalizer) ? undefined : live;
        },
        { timeoutMs: 300_000 },
      ),
    );
    assert.deepEqual(finalized.metadata.finalizers, theirs);
  },
);
