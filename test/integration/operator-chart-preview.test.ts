/**
 * The provider's preview of a chart (provider/chart-preview.ts) against the local cluster: a chart with a
 * template error fails with the message the operator's Degraded condition carries (naming the template file and
 * line), an object the apiserver rejects fails naming its template, a pod the operator's render policy refuses
 * fails with the operator's reason, a good chart passes, and a chart that cannot be fetched yet only skips the check. The real `pulumi preview` calls this from the provider's check.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`), and helm on PATH as a user's provider
 * finds it (`npm test` puts the toolchain's first).
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { checkInputs } from "../../provider/check.ts";
import { chartPreview } from "../../provider/chart-preview.ts";
import type { InstanceInputs } from "../../provider/inputs.ts";
import { adminClient, testNamespace } from "../support/cluster.ts";
import { packChart } from "../support/helm.ts";

const client = adminClient();
const chartDir = path.resolve(import.meta.dirname, "../../examples/charts/myapp");

async function configMap(namespace: string, name: string, chart: Buffer) {
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
    binaryData: { "chart.tgz": chart.toString("base64") },
  });
}

function inputs(namespace: string, chart: Record<string, unknown>): InstanceInputs {
  const outcome = checkInputs(
    {},
    { owner: "o/p/s", logicalName: "web", name: "web", namespace, image: "nginx:1.27", chart },
  );
  assert.deepEqual(outcome.failures, []);
  return outcome.inputs as unknown as InstanceInputs;
}

test("preview renders the chart: template errors and rejected objects fail it with the operator's words", async (t) => {
  const namespace = await testNamespace(t, client, "chart-preview");
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-preview-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  await configMap(namespace, "good", await packChart(chartDir));

  const broken = path.join(work, "broken");
  await cp(chartDir, broken, { recursive: true });
  await writeFile(path.join(broken, "templates/broken.yaml"), '{{ fail "this chart is broken on purpose" }}\n');
  await configMap(namespace, "broken", await packChart(broken));

  const rejected = path.join(work, "rejected");
  await cp(chartDir, rejected, { recursive: true });
  await writeFile(
    path.join(rejected, "templates/bad-service.yaml"),
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}-bad\nspec:\n  ports:\n    - port: 70000\n",
  );
  await configMap(namespace, "rejected", await packChart(rejected));

  // A good chart renders and every object passes the apiserver's dry-run.
  assert.deepEqual(await chartPreview(client, inputs(namespace, { configMap: "good" })), {
    checked: true,
    failures: [],
  });

  // A template error: the operator's message, naming the template file and line.
  const failing = await chartPreview(client, inputs(namespace, { configMap: "broken" }));
  assert.ok(failing.checked);
  assert.equal(failing.failures.length, 1);
  assert.match(
    failing.failures[0]?.reason ?? "",
    new RegExp(
      `^ConfigMap ${namespace}/broken does not render: .*myapp/templates/broken\\.yaml:1.*this chart is broken on purpose`,
    ),
  );

  // An object the apiserver rejects: named with its template.
  const invalid = await chartPreview(client, inputs(namespace, { configMap: "rejected" }));
  assert.ok(invalid.checked);
  assert.match(invalid.failures[0]?.reason ?? "", /myapp\/templates\/bad-service\.yaml.*port/);

  // A privileged pod: the operator's render policy, before anything is created.
  const privileged = path.join(work, "privileged");
  await cp(chartDir, privileged, { recursive: true });
  await writeFile(
    path.join(privileged, "templates/privileged.yaml"),
    [
      "apiVersion: apps/v1",
      "kind: Deployment",
      "metadata: { name: '{{ .Release.Name }}-root' }",
      "spec:",
      "  selector: { matchLabels: { app: root } }",
      "  template:",
      "    metadata: { labels: { app: root } }",
      "    spec:",
      "      containers:",
      "        - { name: c, image: busybox, securityContext: { privileged: true } }",
      "",
    ].join("\n"),
  );
  await configMap(namespace, "privileged", await packChart(privileged));
  const refused = await chartPreview(client, inputs(namespace, { configMap: "privileged" }));
  assert.ok(refused.checked);
  assert.equal(refused.failures.length, 1);
  assert.match(
    refused.failures[0]?.reason ?? "",
    new RegExp(`^ConfigMap ${namespace}/privileged: ChartPodSecurity: .*Deployment/web-root.*privileged`),
  );

  // Not there yet: skipped with a note, not failed.
  const missing = await chartPreview(client, inputs(namespace, { configMap: "created-later" }));
  assert.deepEqual(missing, { checked: false, note: `ConfigMap ${namespace}/created-later does not exist` });
});

test("with the platform's chart sources, a chart from elsewhere fails the preview in the operator's words, unfetched", async (t) => {
  // GIVEN a repository that counts its requests, and a platform that allows ConfigMap charts only
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? "");
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const repo = `http://127.0.0.1:${(server.address() as AddressInfo).port}/charts`;
  const chart = { repo, name: "app", version: "1.0.0" };
  // WHEN an instance's chart comes from that repository
  const refused = await chartPreview(client, inputs("default", chart), { sources: [] });
  // THEN the preview fails naming the source and the platform's setting, and nothing was requested
  assert.deepEqual(refused, {
    checked: true,
    failures: [
      {
        property: "chart",
        reason:
          `ChartSourceNotAllowed: chart app 1.0.0 from ${repo} is not an allowed chart source: the platform allows ` +
          "ConfigMap charts only (the platform's chartSources); use a chart in a ConfigMap, or ask the platform to " +
          "add the source",
      },
    ],
  });
  assert.deepEqual(requests, []);
  // AND a source the platform allows is fetched as before (here: not there, so the check is skipped with a note)
  const allowed = await chartPreview(client, inputs("default", chart), { sources: [repo] });
  assert.equal(allowed.checked, false);
  assert.ok(requests.length > 0);
});
