/**
 * The operator's render path is Helm's, byte for byte: values derived from a typed spec (chartValues) rendered by
 * helmRenderer give exactly the stream `helm template --skip-tests --no-hooks` prints for the same chart with the
 * values written by hand, for this repository's chart (helpers, a subchart, optional Ingress and StatefulSet).
 * It also reports what it does not run: hooks and tests, and CRDs. Needs only the helm binary, no cluster.
 */
import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { validateSpec } from "../../api/index.ts";
import { ChartRenderError, chartValues, helmRenderer } from "../../chart/index.ts";
import { helm, helmBinary, packChart } from "../support/helm.ts";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const chartDir = path.join(repoRoot, "examples/charts/myapp");

function spec(input: Record<string, unknown>) {
  const verdict = validateSpec(input);
  if (!verdict.ok) throw new Error(JSON.stringify(verdict.issues));
  return verdict.spec;
}

async function helmTemplate(chart: Buffer, args: readonly string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "myapp-golden-"));
  try {
    await writeFile(path.join(dir, "chart.tgz"), chart);
    return await helm(["template", "web", path.join(dir, "chart.tgz"), "--namespace", "shop", ...args]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("examples/charts/myapp renders byte for byte what helm template renders", async () => {
  const renderer = helmRenderer({ binary: await helmBinary() });
  const chart = await packChart(chartDir);
  const cases = [
    {
      spec: { image: "nginx:1.27", replicas: 2, chart: { configMap: "c" } },
      set: ["replicaCount=2", "image.repository=nginx", "image.tag=1.27", "service.port=8080"],
    },
    {
      spec: {
        image: "registry.local:5000/team/app:2.0",
        port: 9000,
        storage: "5Gi",
        chart: { configMap: "c", valuePaths: { storage: "persistence.size" } },
        values: {
          persistence: { enabled: true },
          ingress: { enabled: true, className: "nginx" },
          settings: { logLevel: "debug" },
        },
      },
      set: [
        "replicaCount=1",
        "image.repository=registry.local:5000/team/app",
        "image.tag=2.0",
        "service.port=9000",
        "persistence.enabled=true",
        "persistence.size=5Gi",
        "ingress.enabled=true",
        "ingress.className=nginx",
        "settings.logLevel=debug",
      ],
    },
  ];
  for (const { spec: input, set } of cases) {
    const rendered = await renderer.render({
      chart,
      release: "web",
      namespace: "shop",
      values: chartValues(spec(input)),
      capabilities: { kubeVersion: "v1.36.3" },
    });
    const expected = await helmTemplate(chart, [
      "--skip-tests",
      "--no-hooks",
      "--kube-version",
      "v1.36.3",
      ...set.flatMap((s) => ["--set", s]),
    ]);
    assert.equal(rendered.manifest, expected);
    assert.match(rendered.manifest, /kind: (Deployment|StatefulSet)/);
    assert.deepEqual(rendered.hooks, []);
    assert.deepEqual(rendered.crds, []);
  }
});

test("hooks, tests and CRDs are left out and reported; a failing template names its file and line", async () => {
  const renderer = helmRenderer({ binary: await helmBinary() });
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-extras-"));
  try {
    const dir = path.join(work, "myapp");
    await cp(chartDir, dir, { recursive: true });
    await writeFile(
      path.join(dir, "templates/test-connection.yaml"),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "{{ .Release.Name }}-test"\n  annotations:\n    "helm.sh/hook": test\nspec:\n  containers: []\n',
    );
    await mkdir(path.join(dir, "crds"));
    await writeFile(
      path.join(dir, "crds/widgets.yaml"),
      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.org\n",
    );
    const rendered = await renderer.render({
      chart: await packChart(dir),
      release: "web",
      namespace: "shop",
      values: { image: { tag: "1.27" } },
    });
    assert.doesNotMatch(rendered.manifest, /kind: Pod\b/);
    assert.deepEqual(rendered.hooks, ["myapp/templates/test-connection.yaml"]);
    assert.deepEqual(rendered.crds, ["widgets.example.org"]);

    await writeFile(path.join(dir, "templates/broken.yaml"), '{{ fail "this chart is broken on purpose" }}\n');
    await assert.rejects(
      renderer.render({ chart: await packChart(dir), release: "web", namespace: "shop", values: {} }),
      (error: unknown) =>
        error instanceof ChartRenderError &&
        /myapp\/templates\/broken\.yaml:1/.test(error.message) &&
        /this chart is broken on purpose/.test(error.message),
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
