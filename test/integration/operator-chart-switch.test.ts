/**
 * Switching an instance between the built-in template and a chart, both ways, on the local cluster with the real
 * operator process and helm:
 * - built-in → chart: the template's Deployment and Service, which the chart does not render, are pruned;
 *   chart → built-in (spec.chart removed): every object the chart rendered is pruned, and only objects the
 *   instance controls (a look-alike with the same labels but no owner reference stays);
 * - a rendered ConfigMap edited by hand is put back at once (the operator watches the chart kinds it may read),
 *   not at the next resync;
 * - storage rules hold across the switch: where the template can take the chart's StatefulSet over (same name,
 *   claim template and selector) the volume claims are kept, the very same ones; where it cannot, the switch is
 *   refused with a reason and nothing changes.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test, type TestContext } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import {
  conditionOf,
  createInstance,
  isCurrent,
  isReadyAtSpec,
  patchSpec,
  startOperator,
  waitForGone,
  waitForInstance,
  type Instance,
} from "../support/operator.ts";

const client = adminClient();
const repoRoot = path.resolve(import.meta.dirname, "../..");
const chartSource = path.join(repoRoot, "examples/charts/myapp");
const chartInstanceLabel = "myapp.example.com/chart-instance";
const minutes = (n: number) => n * 60_000;

/** Puts a packed chart into a ConfigMap, as `kubectl create configmap NAME --from-file=chart.tgz=...` would. */
async function chartConfigMap(namespace: string, name: string, chart: Buffer): Promise<void> {
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
    binaryData: { "chart.tgz": chart.toString("base64") },
  });
}

/** The repository's chart with every object named `<release>-app`: nothing shares a name with the template's. */
async function renamedChart(t: TestContext): Promise<Buffer> {
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-renamed-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  await cp(chartSource, path.join(work, "myapp"), { recursive: true });
  const helpers = path.join(work, "myapp/templates/_helpers.tpl");
  const text = await readFile(helpers, "utf8");
  const renamed = text.replace(
    '{{- .Release.Name | trunc 63 | trimSuffix "-" -}}',
    '{{- printf "%s-app" .Release.Name | trunc 63 | trimSuffix "-" -}}',
  );
  assert.notEqual(renamed, text, "the chart's fullname helper changed");
  await writeFile(helpers, renamed);
  return packChart(path.join(work, "myapp"));
}

/** Removes spec.chart (and spec.values), as `kubectl patch --type merge -p '{"spec":{"chart":null}}'` does. */
function removeChart(namespace: string, name: string): Promise<Instance> {
  return client.mergePatch<Instance>(apiVersion, kind, name, namespace, { spec: { chart: null, values: null } });
}

/** `Kind/name` of every live object carrying the chart label of instance `name`, sorted. */
async function chartObjects(namespace: string, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const [version, of] of [
    ["apps/v1", "Deployment"],
    ["apps/v1", "StatefulSet"],
    ["v1", "Service"],
    ["v1", "ConfigMap"],
  ] as const) {
    const list = await client.list(version, of, { namespace, labelSelector: `${chartInstanceLabel}=${name}` });
    found.push(...list.items.map((item) => `${of}/${item.metadata.name ?? ""}`));
  }
  return found.sort();
}

const exists = (version: string, of: string, name: string, namespace: string) =>
  client.find(version, of, name, namespace).then((object) => object !== undefined);

test("built-in → chart → built-in: each side prunes what the other made (only the instance's); hand edits are repaired at once", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-switch");
  await chartConfigMap(namespace, "renamed-chart", await renamedChart(t));
  const operator = await startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });
  const ready = (what: string) =>
    waitForInstance(client, namespace, "shop", what, isReadyAtSpec, minutes(2)).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${operator.logTail()}`);
    });

  // GIVEN an instance on the built-in template, and a look-alike of a chart object it does not own
  await createInstance(client, namespace, "shop", { image: "nginx:1.27", replicas: 2 });
  await ready("Ready on the built-in template");
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "shop-lookalike",
      namespace,
      labels: { "app.kubernetes.io/managed-by": "myapp-operator", [chartInstanceLabel]: "shop" },
    },
    data: { owner: "nobody" },
  });

  // WHEN it switches to a chart whose objects have other names
  await patchSpec(client, namespace, "shop", { chart: { configMap: "renamed-chart" } });

  // THEN it is Ready on the chart's objects, and the template's Deployment and Service are pruned
  await ready("Ready on the chart");
  await waitForGone(client, "apps/v1", "Deployment", namespace, "shop");
  await waitForGone(client, "v1", "Service", namespace, "shop");
  assert.deepEqual(await chartObjects(namespace, "shop"), [
    "ConfigMap/shop-app",
    "ConfigMap/shop-lookalike",
    "ConfigMap/shop-settings",
    "Deployment/shop-app",
    "Service/shop-app",
  ]);

  // WHEN someone edits a rendered ConfigMap by hand
  const edited = Date.now();
  await client.mergePatch("v1", "ConfigMap", "shop-app", namespace, { data: { GREETING: "edited by hand" } });

  // THEN the operator puts the rendered value back, woken by the ConfigMap's own watch event (resync is 10 h)
  await waitFor(
    "the hand edit of ConfigMap shop-app to be reverted",
    async () => {
      const configMap = await client.get<Typed<{ data: Record<string, string> }>>(
        "v1",
        "ConfigMap",
        "shop-app",
        namespace,
      );
      return configMap.data["GREETING"] === "hello" ? true : undefined;
    },
    { timeoutMs: 60_000 },
  );
  t.diagnostic(`hand edit of a rendered ConfigMap reverted ${((Date.now() - edited) / 1000).toFixed(1)} s after it`);
  // ... and a rendered ConfigMap deleted by hand comes back the same way
  await client.delete("v1", "ConfigMap", "shop-settings", namespace);
  await waitFor("ConfigMap shop-settings to be re-created", async () =>
    (await exists("v1", "ConfigMap", "shop-settings", namespace)) ? true : undefined,
  );

  // WHEN spec.chart is removed again
  await removeChart(namespace, "shop");

  // THEN the built-in template's children are back, every object the chart rendered is pruned, and the
  // look-alike the instance does not own is left alone
  await ready("Ready on the built-in template again");
  for (const [version, of, name] of [
    ["apps/v1", "Deployment", "shop-app"],
    ["v1", "Service", "shop-app"],
    ["v1", "ConfigMap", "shop-app"],
    ["v1", "ConfigMap", "shop-settings"],
  ] as const) {
    await waitForGone(client, version, of, namespace, name);
  }
  assert.ok(await exists("apps/v1", "Deployment", "shop", namespace), "the template's Deployment");
  assert.ok(await exists("v1", "Service", "shop", namespace), "the template's Service");
  assert.deepEqual(await chartObjects(namespace, "shop"), ["ConfigMap/shop-lookalike"]);
});

test("storage across a switch back: the template takes over the chart's StatefulSet and keeps its claims, or the switch is refused", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-switch-data");
  await chartConfigMap(namespace, "myapp-chart", await packChart(chartSource));
  await chartConfigMap(namespace, "renamed-chart", await renamedChart(t));
  const operator = await startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });
  const ready = (name: string, what: string) =>
    waitForInstance(client, namespace, name, what, isReadyAtSpec, minutes(3)).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${operator.logTail()}`);
    });
  const persistent = (configMap: string) => ({
    image: "nginx:1.27",
    storage: "1Gi",
    chart: { configMap, valuePaths: { storage: "persistence.size" } },
    values: { persistence: { enabled: true } },
  });

  // GIVEN two instances with volumes from charts: "keep" named as the template names it, "drop" renamed
  await createInstance(client, namespace, "keep", persistent("myapp-chart"));
  await createInstance(client, namespace, "drop", persistent("renamed-chart"));
  await ready("keep", "Ready on the chart");
  await ready("drop", "Ready on the chart");
  const claim = (name: string) => client.get("v1", "PersistentVolumeClaim", name, namespace);
  const keepClaim = await waitFor("claim data-keep-0", () =>
    client.find("v1", "PersistentVolumeClaim", "data-keep-0", namespace),
  );
  const dropClaim = await waitFor("claim data-drop-app-0", () =>
    client.find("v1", "PersistentVolumeClaim", "data-drop-app-0", namespace),
  );

  // WHEN spec.chart is removed from both (spec.storage stays: it may not be removed)
  await removeChart(namespace, "keep");
  await removeChart(namespace, "drop");

  // THEN "keep" runs on the template's StatefulSet with the very same claim, the chart's other objects pruned
  await ready("keep", "Ready on the built-in template");
  const statefulSet = await client.get<Typed<{ spec: { serviceName: string } }>>(
    "apps/v1",
    "StatefulSet",
    "keep",
    namespace,
  );
  assert.equal(statefulSet.spec.serviceName, "keep-pods", "the template's StatefulSet (re-created, pods adopted)");
  assert.equal((await claim("data-keep-0")).metadata.uid, keepClaim.metadata.uid, "the same volume claim");
  // (pruning is a delete each: an object is listed until the apiserver has finished deleting it, maybe after Ready)
  await waitFor("every object the chart rendered for keep to be pruned", async () => {
    assert.deepEqual(await chartObjects(namespace, "keep"), []);
    return true;
  });

  // AND "drop" is refused: Degraded with the reason, its chart StatefulSet and claim untouched
  const refused = await waitForInstance(
    client,
    namespace,
    "drop",
    "Degraded: the switch would drop volumes",
    (instance) => isCurrent(instance) && conditionOf(instance, "Degraded")?.status === "True",
  );
  assert.equal(conditionOf(refused, "Degraded")?.reason, "BuiltInTemplateDropsVolumes");
  assert.match(conditionOf(refused, "Degraded")?.message ?? "", /StatefulSet\/drop-app, whose pods keep volumes/);
  const kept = await client.get<KubeObject>("apps/v1", "StatefulSet", "drop-app", namespace);
  assert.equal(kept.metadata.deletionTimestamp, undefined);
  assert.equal((await claim("data-drop-app-0")).metadata.uid, dropClaim.metadata.uid);
  assert.equal(await exists("apps/v1", "StatefulSet", "drop", namespace), false, "the template applied nothing");
});
