/**
 * What a tenant's chart puts into the instance's status, against the running operator: a `fail` of 40,000
 * characters, a main workload whose first container's image is 2,000 characters long, and one whose selector
 * prints longer than the status may hold. Each instance still gets a status that says where it stands (the message
 * cut short, the image or selector left out), instead of a status write the apiserver refuses on every retry.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`) and the toolchain's helm.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { maxLoggedStringLength } from "../../operator/log-bounds.ts";
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
const image = "nginx:1.27";
const longImage = `registry.example.com/${"a".repeat(2000)}:1`;
// 70 labels of 63-character keys: "key=v,…" prints ~4,600 characters, over the status's 4,096 for a selector.
const wideLabels = Object.fromEntries(
  Array.from({ length: 70 }, (_, i) => [`k${String(i).padStart(2, "0")}${"x".repeat(60)}`, "v"]),
);

/** A Deployment of the release's name with these containers and pod labels (JSON is YAML). */
function deployment(containers: readonly { name: string; image: string }[], labels: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "{{ .Release.Name }}" },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers } },
    },
  });
}

const charts = {
  loud: '{{ fail (repeat 40000 "x") }}\n',
  "long-image": deployment(
    [
      { name: "sidecar", image: longImage },
      { name: "main", image },
    ],
    { app: "long-image" },
  ),
  "wide-selector": deployment([{ name: "main", image }], wideLabels),
};

test("a chart's 40,000-character failure, 2,000-character image and 4,600-character selector still get a status", async (t) => {
  const namespace = await testNamespace(t, client, "op-status-limits");
  const work = await mkdtemp(path.join(tmpdir(), "myapp-status-limits-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  for (const [name, template] of Object.entries(charts)) {
    const dir = path.join(work, name);
    await mkdir(path.join(dir, "templates"), { recursive: true });
    await writeFile(path.join(dir, "Chart.yaml"), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`);
    await writeFile(path.join(dir, "templates/main.yaml"), template);
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `${name}-chart`, namespace },
      binaryData: { "chart.tgz": (await packChart(dir)).toString("base64") },
    });
  }
  const operator = await startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });

  // GIVEN an instance on each chart
  for (const name of Object.keys(charts)) {
    await createInstance(client, namespace, name, {
      image,
      podSecurityLevel: "Baseline",
      chart: { configMap: `${name}-chart` },
    });
  }

  // THEN the one whose chart fails is Degraded with helm's message, cut to 4,096 characters
  const degraded = (i: Instance) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True";
  const loud = await waitForInstance(client, namespace, "loud", "Degraded", degraded, 120_000);
  for (const message of [
    loud.status?.message,
    conditionOf(loud, "Degraded")?.message,
    conditionOf(loud, "Ready")?.message,
  ]) {
    assert.equal(conditionOf(loud, "Degraded")?.reason, "ChartRenderFailed");
    assert.match(message ?? "", /does not render: execution error at \(loud\/templates\/main\.yaml:1:3\): x{100}/);
    assert.match(message ?? "", /x … \(\d+ more characters\)$/);
    assert.equal(Array.from(message ?? "").length, 4096);
  }

  // AND the operator's log has more of it, up to the bound of a logged string (16 Ki characters); the line is
  // logged once the status write returned, and reaches us a moment after the stored status does
  const whole = await operator.waitForLog((line) => line.msg === "status message cut to fit the status", {
    timeoutMs: 120_000,
    what: '"status message cut to fit the status" line',
  });
  const logged = String(whole["wholeMessage"] ?? "");
  assert.ok(logged.includes("x".repeat(maxLoggedStringLength - 200)), "more of the message is logged");
  assert.match(logged, /x … \(\d+ more characters\)$/);
  assert.ok(logged.length < maxLoggedStringLength + 64, `${logged.length} characters logged`);

  // AND the other two are Ready, without the image or the selector the status cannot hold
  const ready = (i: Instance) => isCurrent(i) && conditionOf(i, "Ready")?.status === "True";
  const longImageInstance = await waitForInstance(client, namespace, "long-image", "Ready", ready, 120_000);
  assert.equal(longImageInstance.status?.image, undefined);
  assert.equal(longImageInstance.status?.selector, "app=long-image");
  const wide = await waitForInstance(client, namespace, "wide-selector", "Ready", ready, 120_000);
  assert.equal(wide.status?.selector, undefined);
  assert.equal(wide.status?.image, image);

  // AND no status write was refused on the way
  const refused = operator.logs.filter((line) => JSON.stringify(line).includes("Too long"));
  assert.deepEqual(refused, [], "no status write was refused as too long");
});
