/**
 * Hostile charts against the running operator: one whose template loops, one that renders more output than
 * allowed, one that wants more memory than allowed. Each fails only its own instance (Degraded, ChartRenderLimit,
 * naming the platform's flag); a well-behaved chart instance created at the same time becomes Ready, and the
 * operator process keeps running throughout.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`) and the toolchain's helm.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace } from "../support/cluster.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import {
  conditionOf,
  createInstance,
  isCurrent,
  startOperator,
  waitForInstance,
  type Instance,
} from "../support/operator.ts";

const client = adminClient();
const goodChart = path.resolve(import.meta.dirname, "../../examples/charts/myapp");

async function chartConfigMap(namespace: string, name: string, chart: Buffer): Promise<void> {
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
    binaryData: { "chart.tgz": chart.toString("base64") },
  });
}

/** A chart with one template. */
async function hostileChart(work: string, name: string, template: string): Promise<Buffer> {
  const dir = path.join(work, name);
  await mkdir(path.join(dir, "templates"), { recursive: true });
  await writeFile(path.join(dir, "Chart.yaml"), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`);
  await writeFile(path.join(dir, "templates/cm.yaml"), template);
  return packChart(dir);
}

test("a looping, a huge and a memory-hungry chart fail on their own limits; the others are served", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-limits");
  const work = await mkdtemp(path.join(tmpdir(), "myapp-hostile-charts-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  const hostile = {
    loop: ["cpu", "{{ range until 100000 }}{{ range until 10000 }}{{ end }}{{ end }}"],
    huge: [
      "output",
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n  x: {{ "a" | repeat 4000000 }}\n',
    ],
    hungry: ["memory", '{{ $x := "ab" }}{{ range until 30 }}{{ $x = print $x $x }}{{ end }}{{ $x }}'],
  } as const;
  for (const [name, [, template]] of Object.entries(hostile)) {
    await chartConfigMap(namespace, `${name}-chart`, await hostileChart(work, name, template));
  }
  await chartConfigMap(namespace, "good-chart", await packChart(goodChart));
  const operator = await startOperator(t, {
    namespaces: [namespace],
    args: [`--helm=${await helmBinary()}`, "--render-cpu=5", "--render-timeout=30", "--render-output=2"],
  });

  // GIVEN the hostile instances first, then a well-behaved one
  for (const name of Object.keys(hostile)) {
    await createInstance(client, namespace, name, { image: "nginx:1.27", chart: { configMap: `${name}-chart` } });
  }
  await createInstance(client, namespace, "good", { image: "nginx:1.27", chart: { configMap: "good-chart" } });

  // THEN the good one becomes Ready
  const ready = (i: Instance) => isCurrent(i) && conditionOf(i, "Ready")?.status === "True";
  await waitForInstance(client, namespace, "good", "Ready", ready, 180_000);

  // AND each hostile one is Degraded, naming the limit it went over
  const degraded = (i: Instance) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True";
  for (const [name, [limit]] of Object.entries(hostile)) {
    const condition = conditionOf(
      await waitForInstance(client, namespace, name, "Degraded", degraded, 120_000),
      "Degraded",
    );
    assert.equal(condition?.reason, "ChartRenderLimit", `${name}: ${condition?.message ?? ""}`);
    assert.match(condition?.message ?? "", new RegExp(`--render-${limit}`));
  }

  // AND the operator never stopped, and still answers its readiness probe
  assert.equal(operator.process.exitCode, null, "the operator is still running");
  assert.equal((await fetch(`${operator.probeUrl}/readyz`)).status, 200);
});

test("a chart of 600 objects is refused; one ConfigMap of 40,000 keys does not hold up the operator", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-objects");
  const work = await mkdtemp(path.join(tmpdir(), "myapp-many-objects-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  const many =
    "{{ range $i := until 600 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x{{ $i }}\n{{ end }}\n";
  // 470 KiB of YAML. Parsed with a duplicate-key check pair by pair (22,767 keys took 3.7 s), this instance got no
  // status within two minutes.
  const wide =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide\ndata:\n{{ range $i := until 40000 }}  k{{ $i }}: v\n{{ end }}";
  await chartConfigMap(namespace, "many-chart", await hostileChart(work, "many", many));
  await chartConfigMap(namespace, "wide-chart", await hostileChart(work, "wide", wide));
  await chartConfigMap(namespace, "good-chart", await packChart(goodChart));
  const operator = await startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });

  // GIVEN the two hostile instances, then a well-behaved one
  await createInstance(client, namespace, "many", { image: "nginx:1.27", chart: { configMap: "many-chart" } });
  await createInstance(client, namespace, "wide", { image: "nginx:1.27", chart: { configMap: "wide-chart" } });
  await createInstance(client, namespace, "good", { image: "nginx:1.27", chart: { configMap: "good-chart" } });

  // THEN the good one becomes Ready
  const ready = (i: Instance) => isCurrent(i) && conditionOf(i, "Ready")?.status === "True";
  await waitForInstance(client, namespace, "good", "Ready", ready, 180_000);

  // AND the one of 600 objects is Degraded on the platform's limit, and none of its objects was created
  const degraded = (i: Instance) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True";
  const refused = conditionOf(
    await waitForInstance(client, namespace, "many", "Degraded", degraded, 120_000),
    "Degraded",
  );
  assert.equal(refused?.reason, "ChartRenderLimit");
  assert.match(refused?.message ?? "", /helm rendered more than 500 objects; the platform's limit is --render-objects/);
  assert.equal(await client.find("v1", "ConfigMap", "x0", namespace), undefined);

  // AND the wide one's ConfigMap is applied, and the instance has a status (Pending: the chart runs no workload)
  const judged = (i: Instance) => isCurrent(i) && conditionOf(i, "Ready") !== undefined;
  await waitForInstance(client, namespace, "wide", "a status", judged, 120_000);
  const applied = await client.find<{ data?: Record<string, string> } & KubeObject>(
    "v1",
    "ConfigMap",
    "wide",
    namespace,
  );
  assert.equal(Object.keys(applied?.data ?? {}).length, 40_000);

  // AND the operator never stopped or lost its lease
  assert.equal(operator.process.exitCode, null, "the operator is still running");
  assert.equal(operator.logs.filter((line) => line.msg === "stopped leading").length, 0);
});
