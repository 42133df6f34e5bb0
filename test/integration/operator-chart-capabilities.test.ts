/**
 * `.Capabilities` come from the live cluster, in the operator and in the provider's preview alike: a chart that
 * branches on `.Capabilities.APIVersions.Has` renders per what the cluster serves (its group versions and kinds,
 * this project's CRD among them), golden against `helm template --api-versions ...` given the cluster's version
 * set as classic discovery lists it, read here independently of the operator's aggregated discovery.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`), and helm on PATH for the preview
 * (`npm test` puts the toolchain's first).
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import { discoverApiVersions } from "../../kube/index.ts";
import { parseManifests } from "../../chart/index.ts";
import { checkInputs } from "../../provider/check.ts";
import { chartPreview } from "../../provider/chart-preview.ts";
import type { InstanceInputs } from "../../provider/inputs.ts";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import { helm, helmBinary, packChart } from "../support/helm.ts";
import { createInstance, startOperator } from "../support/operator.ts";

const client = adminClient();

/** What the chart asks the cluster: served (a kind only discovery knows, the CRD) and not served. */
const probes = [
  "apps/v1",
  "apps/v1/Deployment",
  "networking.k8s.io/v1/Ingress",
  `${apiVersion}/${kind}`,
  "monitoring.coreos.com/v1/ServiceMonitor",
];

const chartYaml = "apiVersion: v2\nname: caps\nversion: 0.1.0\n";
const valuesYaml = `probes:\n${probes.map((probe) => `  - ${probe}`).join("\n")}\nrequire: ""\n`;
const template = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-capabilities
data:
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  {{- range $i, $probe := .Values.probes }}
  probe{{ $i }}: {{ printf "%s=%t" $probe ($.Capabilities.APIVersions.Has $probe) | quote }}
  {{- end }}
{{- if and .Values.require (not (.Capabilities.APIVersions.Has .Values.require)) }}
{{- fail (printf "this chart needs %s, which the cluster does not serve" .Values.require) }}
{{- end }}
`;

/** The cluster's version set as classic discovery lists it (what helm install's GetVersionSet builds). */
async function classicVersionSet(): Promise<string[]> {
  const core = JSON.parse(await client.raw("/api")) as { versions: string[] };
  const groups = JSON.parse(await client.raw("/apis")) as { groups: { versions: { groupVersion: string }[] }[] };
  const groupVersions = [...core.versions, ...groups.groups.flatMap((g) => g.versions.map((v) => v.groupVersion))];
  const set = new Set(groupVersions);
  for (const groupVersion of groupVersions) {
    const list = JSON.parse(
      await client.raw(groupVersion.includes("/") ? `/apis/${groupVersion}` : `/api/${groupVersion}`),
    ) as { resources: { kind: string }[] };
    for (const resource of list.resources) set.add(`${groupVersion}/${resource.kind}`);
  }
  return [...set];
}

test("a chart branching on .Capabilities.APIVersions.Has renders per the live cluster, in the operator and in preview", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-caps");
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-caps-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  const dir = path.join(work, "caps");
  await mkdir(path.join(dir, "templates"), { recursive: true });
  await writeFile(path.join(dir, "Chart.yaml"), chartYaml);
  await writeFile(path.join(dir, "values.yaml"), valuesYaml);
  await writeFile(path.join(dir, "templates/capabilities.yaml"), template);
  const chart = await packChart(dir);
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "caps-chart", namespace },
    binaryData: { "chart.tgz": chart.toString("base64") },
  });
  await startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });

  // GIVEN an instance whose chart reports what .Capabilities says
  await createInstance(client, namespace, "web", { image: "nginx:1.27", chart: { configMap: "caps-chart" } });

  // WHEN the operator renders it
  const applied = await waitFor(
    "the operator to apply the capabilities ConfigMap",
    () => client.find<Typed<{ data?: Record<string, string> }>>("v1", "ConfigMap", "web-capabilities", namespace),
    { timeoutMs: 120_000 },
  );

  // THEN it is exactly what helm template renders with the cluster's version set
  const version = JSON.parse(await client.raw("/version")) as { gitVersion: string };
  await writeFile(path.join(work, "chart.tgz"), chart);
  const golden = await helm([
    "template",
    "web",
    path.join(work, "chart.tgz"),
    "--namespace",
    namespace,
    "--kube-version",
    version.gitVersion,
    ...(await classicVersionSet()).flatMap((entry) => ["--api-versions", entry]),
  ]);
  const expected = parseManifests(golden)[0]?.object as { data?: Record<string, string> } | undefined;
  assert.deepEqual(applied.data, expected?.data);
  // ... which answers per the live cluster: kinds and the CRD are served, a CRD that is not installed is not.
  assert.deepEqual(Object.values(applied.data ?? {}).slice(1), [
    "apps/v1=true",
    "apps/v1/Deployment=true",
    "networking.k8s.io/v1/Ingress=true",
    `${apiVersion}/${kind}=true`,
    "monitoring.coreos.com/v1/ServiceMonitor=false",
  ]);
  assert.equal(applied.data?.["kubeVersion"], version.gitVersion);
  // The whole set, not only what this chart asks: aggregated discovery (what the operator reads) lists exactly
  // what classic discovery does.
  assert.deepEqual(await discoverApiVersions(client), (await classicVersionSet()).sort());

  // AND preview renders with the same capabilities: a chart that requires a served kind passes, one that requires
  // a kind the cluster does not serve fails with the chart's own message. (Its helm: the one on PATH, as a user's
  // provider finds it; `npm test` puts the toolchain's first, the one the operator above was given.)
  const inputs = (require: string): InstanceInputs => {
    const outcome = checkInputs(
      {},
      {
        owner: "o/p/s",
        logicalName: "web",
        name: "web",
        namespace,
        image: "nginx:1.27",
        chart: { configMap: "caps-chart" },
        values: { require },
      },
    );
    assert.deepEqual(outcome.failures, []);
    return outcome.inputs as unknown as InstanceInputs;
  };
  assert.deepEqual(await chartPreview(client, inputs(`${apiVersion}/${kind}`)), { checked: true, failures: [] });
  const missing = await chartPreview(client, inputs("monitoring.coreos.com/v1/ServiceMonitor"));
  assert.ok(missing.checked);
  assert.match(
    missing.failures[0]?.reason ?? "",
    /caps\/templates\/capabilities\.yaml.*this chart needs monitoring\.coreos\.com\/v1\/ServiceMonitor/,
  );
});
