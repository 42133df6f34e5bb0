/**
 * A chart instance that works and repairs drift: the check the tests of hostile tenants make beside their attack
 * (the operator still serves everyone else, and the instance beside the attack too).
 */
import assert from "node:assert/strict";
import path from "node:path";
import type { KubeClient, KubeObject } from "../../kube/index.ts";
import { waitFor } from "./cluster.ts";
import { packChart } from "./helm.ts";
import { createInstance, isReadyAtSpec, waitForInstance } from "./operator.ts";

const repoRoot = path.resolve(import.meta.dirname, "../..");

/** `work`, unless the operator exits first (a race with its exit). */
export type WhileAlive = <T>(work: Promise<T>) => Promise<T>;

/** A chart instance `name` from the example chart in `namespace`, Ready, and a hand edit of its ConfigMap undone. */
export async function chartInstanceRepairs(
  client: KubeClient,
  namespace: string,
  name: string,
  alive: WhileAlive,
): Promise<void> {
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "myapp-chart", namespace },
    binaryData: { "chart.tgz": (await packChart(path.join(repoRoot, "examples/charts/myapp"))).toString("base64") },
  });
  await createInstance(client, namespace, name, {
    image: "nginx:1.27",
    podSecurityLevel: "Baseline",
    chart: { configMap: "myapp-chart" },
  });
  await alive(waitForInstance(client, namespace, name, "Ready", isReadyAtSpec, 180_000));
  await handEditUndone(client, namespace, name, alive);
}

/** A hand edit of a ConfigMap the chart of instance `name` rendered is undone. */
export async function handEditUndone(
  client: KubeClient,
  namespace: string,
  name: string,
  alive: WhileAlive,
): Promise<void> {
  // A ConfigMap the chart rendered, edited by hand: its event comes on the same watch as the tenant's.
  type ConfigMap = KubeObject & { data?: Record<string, string> };
  const rendered = await client.list<ConfigMap>("v1", "ConfigMap", {
    namespace,
    labelSelector: `myapp.example.com/chart-instance=${name}`,
  });
  // The instance's own (a tenant may label theirs as its chart's too).
  const chosen = rendered.items.find(
    (configMap) =>
      Object.keys(configMap.data ?? {}).length > 0 &&
      configMap.metadata.ownerReferences?.some((owner) => owner.controller && owner.name === name),
  );
  assert.ok(chosen, "the example chart renders a ConfigMap with data");
  const edited = chosen.metadata.name ?? "";
  const data = chosen.data ?? {};
  await client.mergePatch("v1", "ConfigMap", edited, namespace, {
    data: Object.fromEntries(Object.keys(data).map((key) => [key, "edited by hand"])),
  });
  const undone = async () => {
    const live = await client.get<ConfigMap>("v1", "ConfigMap", edited, namespace);
    return JSON.stringify(live.data) === JSON.stringify(data) ? true : undefined;
  };
  await alive(waitFor(`the operator to undo the edit of ConfigMap ${edited}`, undone, { timeoutMs: 120_000 }));
}
