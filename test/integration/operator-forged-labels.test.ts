/**
 * A tenant's objects that carry the operator's label. The apiserver filters an informer by label alone, and anyone
 * who may create a ConfigMap may label it `app.kubernetes.io/managed-by: myapp-operator`: the operator lists and
 * watches it like its own children. Of an object no instance controls it keeps only the identity
 * (operator/runtime/cached-identity.ts), and it reads lists item by item (kube/list-stream.ts), so what such
 * objects weigh does not count against the memory of the operator every namespace shares.
 *
 * The real cluster and operator process, on a heap smaller than the tenant's objects (`--max-old-space-size=128`):
 * 150 ConfigMaps of 900 KiB with the label before it starts (its first list, which the apiserver serves in one
 * response: 132 MiB of text), 50 more while it runs (its watch), 176 MiB in all. Before, it died of "JavaScript heap
 * out of memory" in the first list, and again on every restart; with whole lists and only the cache's identities,
 * still in the first list. Then a chart instance beside them is Ready, and a hand edit of
 * the ConfigMap its chart renders, which the ConfigMap watch delivers after the tenant's, is undone.
 *
 * The same again with ConfigMaps that say they are an instance's chart's: its chart label and a controller
 * reference to it, uid and all, while its chart never renders (so nothing is ever pruned). Before, the cache kept
 * those whole (300 of 1 MB took an operator from 166 to 498 MiB, 600 killed it); now only what the instance's
 * render names is, and the tenant's objects are neither applied over nor deleted.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "../../kube/index.ts";
import { chartInstanceRepairs, handEditUndone } from "../support/chart-drift.ts";
import { adminClient, testNamespace } from "../support/cluster.ts";
import { helmBinary } from "../support/helm.ts";
import { createInstance, exitOf, startOperator } from "../support/operator.ts";

const client = adminClient();
const forgedLabels = { "app.kubernetes.io/managed-by": "myapp-operator", "app.kubernetes.io/instance": "web" };
const blob = "x".repeat(900 * 1024);
/** Labelled ConfigMaps of 900 KiB before the operator starts (132 MiB: its first list) and while it runs. */
const before = 150;
const after = 50;

/** `count` ConfigMaps of 900 KiB named `prefix-N` with the operator's labels (or `metadata`), two at a time. */
async function forge(
  namespace: string,
  prefix: string,
  count: number,
  metadata: Partial<KubeObject["metadata"]> = { labels: forgedLabels },
): Promise<void> {
  for (let i = 0; i < count; i += 2) {
    await Promise.all(
      [i, i + 1].map((n) =>
        client.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { ...metadata, name: `${prefix}-${n}`, namespace },
          data: { blob },
        }),
      ),
    );
  }
}

test(
  "a tenant's labelled ConfigMaps, more than the operator's heap, cost it their identity only",
  {
    timeout: 10 * 60_000,
  },
  async (t) => {
    const namespace = await testNamespace(t, client, "forged");
    await forge(namespace, "before", before);

    const operator = await startOperator(t, {
      namespaces: [namespace],
      leaderElection: false,
      args: [`--helm=${await helmBinary()}`],
      env: { NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1" },
    });
    const exited = exitOf(operator);
    exited.catch(() => {}); // the test stops it in the end
    /** `work`, unless the operator exits first. */
    const alive = <T>(work: Promise<T>) => Promise.race([work, exited]);
    await alive(forge(namespace, "after", after));
    await chartInstanceRepairs(client, namespace, "web", alive);
  },
);

test(
  "a tenant's ConfigMaps that say they are a chart instance's cost the operator their identity only, untouched",
  {
    timeout: 10 * 60_000,
  },
  async (t) => {
    // GIVEN instance holder, whose chart never renders, and 150 ConfigMaps of 900 KiB labelled as its chart's and
    // controlled by it, uid and all, before the operator starts (its first list), 50 more while it runs
    const namespace = await testNamespace(t, client, "forged-chart");
    const holder = await createInstance(client, namespace, "holder", {
      image: "nginx:1.27",
      podSecurityLevel: "Baseline",
      chart: { configMap: "no-such-chart" },
    });
    const children = {
      labels: { "app.kubernetes.io/managed-by": "myapp-operator", "myapp.example.com/chart-instance": "holder" },
      ownerReferences: [
        {
          apiVersion: holder.apiVersion,
          kind: holder.kind,
          name: "holder",
          uid: holder.metadata.uid ?? "",
          controller: true,
        },
      ],
    };
    await forge(namespace, "before", before, children);
    const start = async () => {
      const operator = await startOperator(t, {
        namespaces: [namespace],
        leaderElection: false,
        args: [`--helm=${await helmBinary()}`],
        env: { NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1" },
      });
      const exited = exitOf(operator);
      exited.catch(() => {}); // the test stops it in the end
      return { operator, alive: <T>(work: Promise<T>) => Promise.race([work, exited]) };
    };
    const { operator, alive } = await start();
    await alive(forge(namespace, "after", after, children));

    // WHEN a chart instance beside it runs THEN the operator lives, the instance is Ready and its drift repaired
    await chartInstanceRepairs(client, namespace, "web", alive);

    // ... and every one of the tenant's ConfigMaps is as the tenant wrote it: none deleted, none applied over
    const forged = await client.list("v1", "ConfigMap", {
      namespace,
      labelSelector: "myapp.example.com/chart-instance=holder",
    });
    assert.equal(forged.items.length, before + after);
    for (const item of forged.items) {
      const managers = (item.metadata.managedFields ?? []).map((entry) => (entry as { manager?: string }).manager);
      assert.ok(!managers.includes("myapp-operator"), `${item.metadata.name ?? ""} is untouched: ${managers.join()}`);
    }

    // WHEN the operator restarts: its first list comes before any render, so of web's objects too the cache keeps
    // identities until web renders
    await operator.stop();
    const again = await start();
    // THEN web's look after it reads them live and writes nothing, and a hand edit is still undone
    const look = await again.alive(
      again.operator.waitForLog(
        (line) => line.msg === "reconciled" && line["key"] === `${namespace}/web` && line["result"] === "success",
        { timeoutMs: 120_000, what: "web's look after the restart" },
      ),
    );
    assert.equal(look["writes"], 0);
    await handEditUndone(client, namespace, "web", again.alive);
  },
);
