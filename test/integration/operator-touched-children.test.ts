/**
 * A tenant touching its instances' objects in a loop (annotating their Deployments, as a tool stamping them would)
 * costs the shared operator reads of the touched objects' events only: no status write (an annotation is a new
 * Deployment generation, which a Ready instance no longer reports as a rollout for the moment its controller takes),
 * and no whole read of a chart's ConfigMap (read whole only when it changed, up to 1 MiB each time before). Every
 * request of the real operator is recorded (test/support/request-recorder.ts).
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { localDir } from "../../tools/lib/paths.ts";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import { createInstance, isReadyAtSpec, startOperator, waitForInstance } from "../support/operator.ts";

const client = adminClient();
const recorder = fileURLToPath(new URL("../support/request-recorder.ts", import.meta.url));
const chartDir = path.resolve(import.meta.dirname, "../../examples/charts/myapp");
const minutes = (n: number) => n * 60_000;

type Deployment = Typed<{ status?: { observedGeneration?: number } }>;

test(
  "annotating instances' Deployments in a loop writes no status and reads no chart ConfigMap whole",
  { timeout: minutes(8) },
  async (t) => {
    const namespace = await testNamespace(t, client, "op-touched");
    const requests = path.join(localDir, `requests-${namespace}.jsonl`);
    writeFileSync(requests, "");
    t.after(() => rmSync(requests, { force: true }));
    const recorded = () =>
      readFileSync(requests, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as { method: string; path: string });

    // GIVEN a built-in instance and a chart instance from a ConfigMap, both Ready, the operator's requests recorded
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "myapp-chart", namespace },
      binaryData: { "chart.tgz": (await packChart(chartDir)).toString("base64") },
    });
    await startOperator(t, {
      namespaces: [namespace],
      args: [`--helm=${await helmBinary()}`],
      env: { NODE_OPTIONS: `--import=${recorder}`, MYAPP_RECORD_REQUESTS: requests },
    });
    await createInstance(client, namespace, "web", { image: "nginx:1.27", replicas: 2 });
    await createInstance(client, namespace, "shop", {
      image: "nginx:1.27",
      podSecurityLevel: "Baseline",
      chart: { configMap: "myapp-chart" },
    });
    for (const name of ["web", "shop"]) {
      await waitForInstance(client, namespace, name, "Ready", isReadyAtSpec, minutes(3));
    }
    // The chart's main Deployment is named after the instance (examples/charts/myapp).
    const deployments = ["web", "shop"];
    for (const name of deployments) {
      assert.ok(await client.find("apps/v1", "Deployment", name, namespace), `Deployment ${name} exists`);
    }
    const before = recorded().length;

    // WHEN a tenant annotates both Deployments 10 times, each touch seen by their controller before the next
    const touches = 10;
    for (let touch = 1; touch <= touches; touch++) {
      for (const name of deployments) {
        await client.mergePatch("apps/v1", "Deployment", name, namespace, {
          metadata: { annotations: { "example.com/touched": String(touch) } },
        });
        await waitFor(
          `Deployment ${name}'s controller sees touch ${touch}`,
          async () => {
            const live = await client.get<Deployment>("apps/v1", "Deployment", name, namespace);
            return (live.status?.observedGeneration ?? 0) >= (live.metadata.generation ?? 0) ? true : undefined;
          },
          { intervalMs: 20 },
        );
      }
    }
    // A change of the operator's own after the touches, to know it has looked at everything they woke: the deleted
    // Service is made again by a reconcile that sees the last touch too (reconciles are level-based).
    for (const name of deployments) {
      await client.delete("v1", "Service", name, namespace);
      await waitFor(`Service ${name} made again`, async () =>
        (await client.find("v1", "Service", name, namespace)) ? true : undefined,
      );
    }

    // THEN the operator wrote no status (at most a lag that outlasted its grace on a busy machine; each touch
    // wrote two before: Progressing, then Ready again), and never read the chart's ConfigMap whole
    const during = recorded().slice(before);
    const statusWrites = during.filter((r) => r.method !== "GET" && /\/myappinstances\/[^/]+\/status/.test(r.path));
    assert.ok(statusWrites.length <= 2, `${statusWrites.length} status writes for ${2 * touches} touches`);
    const configMapPath = `/api/v1/namespaces/${namespace}/configmaps/myapp-chart`;
    const wholeReads = during.filter((r) => r.method === "GET" && r.path === configMapPath);
    const versionReads = during.filter((r) => r.method === "GET" && r.path === `${configMapPath}?resourceVersion=0`);
    assert.deepEqual(wholeReads, [], "the chart's ConfigMap is not read whole while it does not change");
    assert.ok(versionReads.length > 0, "each reconcile of the chart instance asks for its ConfigMap's version");
    for (const name of ["web", "shop"]) {
      await waitForInstance(client, namespace, name, "still Ready", isReadyAtSpec, minutes(1));
    }
  },
);
