/**
 * Charts as the operator's template engine, against the local cluster with the real operator process and the
 * real helm binary:
 * - the public podinfo chart (helpers, a redis Deployment + Service behind `redis.enabled`, its own value names)
 *   works unchanged through valuePaths: the objects the operator applies are exactly those
 *   `helm template --skip-tests --no-hooks` renders, and an image change through the spec rolls out and is
 *   tracked in status.image;
 * - this repository's chart (examples/charts/myapp, with a subchart) reaches Ready; a new chart version rolls the
 *   app out, status.image follows, and an object the new version no longer renders is pruned;
 * - a chart with a template error makes the instance Degraded, naming the template.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`); builds helm once when nothing
 * provides it (test/support/helm.ts).
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test, type TestContext } from "node:test";
import { parseManifests, type RenderedObject } from "../../chart/index.ts";
import { isSubset } from "../../operator/desired/index.ts";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import { helm, helmBinary, packChart, podinfoChartDir } from "../support/helm.ts";
import {
  conditionOf,
  createInstance,
  isCurrent,
  patchSpec,
  startOperator,
  waitForInstance,
  type Instance,
} from "../support/operator.ts";

const client = adminClient();
const repoRoot = path.resolve(import.meta.dirname, "../..");
const chartInstanceLabel = "myapp.example.com/chart-instance";

/** Puts a packed chart into a ConfigMap, as `kubectl create configmap NAME --from-file=chart.tgz=...` would. */
async function chartConfigMap(namespace: string, name: string, chart: Buffer): Promise<void> {
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
    binaryData: { "chart.tgz": chart.toString("base64") },
  });
}

/** `helm template` of `chart` with `values`, as a user would run it: the objects the operator must apply. */
async function helmTemplate(
  chart: Buffer,
  release: string,
  namespace: string,
  values: Record<string, unknown>,
): Promise<RenderedObject[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "myapp-chart-test-"));
  try {
    await writeFile(path.join(dir, "chart.tgz"), chart);
    await writeFile(path.join(dir, "values.json"), JSON.stringify(values));
    const version = JSON.parse(await client.raw("/version")) as { gitVersion: string };
    const stream = await helm([
      "template",
      release,
      path.join(dir, "chart.tgz"),
      "--namespace",
      namespace,
      "--skip-tests",
      "--no-hooks",
      "--values",
      path.join(dir, "values.json"),
      "--kube-version",
      version.gitVersion,
    ]);
    return parseManifests(stream).map((manifest) => manifest.object);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const chartKinds = [
  ["apps/v1", "Deployment"],
  ["apps/v1", "StatefulSet"],
  ["v1", "Service"],
  ["v1", "ConfigMap"],
  ["v1", "ServiceAccount"],
  ["networking.k8s.io/v1", "Ingress"],
  ["policy/v1", "PodDisruptionBudget"],
  ["autoscaling/v2", "HorizontalPodAutoscaler"],
] as const;

/** Every live object the operator applied for instance `name` (by its chart label). */
async function appliedObjects(namespace: string, name: string): Promise<Typed<Record<string, unknown>>[]> {
  const found: Typed<Record<string, unknown>>[] = [];
  for (const [apiVersion, kind] of chartKinds) {
    const list = await client.list<Typed<Record<string, unknown>>>(apiVersion, kind, {
      namespace,
      labelSelector: `${chartInstanceLabel}=${name}`,
    });
    found.push(...list.items.map((item) => ({ ...item, apiVersion, kind })));
  }
  return found;
}

const id = (o: { apiVersion: string; kind: string; metadata: { name?: string } }) =>
  `${o.apiVersion}/${o.kind}/${o.metadata.name ?? ""}`;

/**
 * The operator applied exactly Helm's objects: the same set, and each live object holds every field Helm rendered
 * (the operator changes only app.kubernetes.io/managed-by and adds its instance label and owner reference).
 */
async function assertExactlyHelmObjects(
  namespace: string,
  name: string,
  expected: readonly RenderedObject[],
): Promise<void> {
  const live = await appliedObjects(namespace, name);
  assert.deepEqual(live.map(id).sort(), expected.map(id).sort());
  for (const object of expected) {
    const labels = { ...object.metadata.labels };
    delete labels["app.kubernetes.io/managed-by"];
    const rendered = { ...object, metadata: { ...object.metadata, labels } };
    const match = live.find((candidate) => id(candidate) === id(object));
    assert.ok(match && isSubset(rendered, match), `${id(object)} is not what helm template renders`);
    assert.equal(match.metadata.labels?.["app.kubernetes.io/managed-by"], "myapp-operator");
  }
}

function readyWithImage(image: string) {
  return (instance: Instance) =>
    isCurrent(instance) && conditionOf(instance, "Ready")?.status === "True" && instance.status?.image === image;
}

async function operatorFor(t: TestContext, namespace: string) {
  return startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });
}

test("a public chart (podinfo) works unchanged through valuePaths: exactly helm template's objects, image rollouts tracked", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-podinfo");
  const chart = await packChart(await podinfoChartDir());
  await chartConfigMap(namespace, "podinfo-chart", chart);
  await operatorFor(t, namespace);

  // GIVEN podinfo with its own value names and its optional redis turned on
  const spec = {
    replicas: 2,
    image: "ghcr.io/stefanprodan/podinfo:6.9.2",
    port: 9898,
    chart: {
      configMap: "podinfo-chart",
      valuePaths: {
        replicas: "replicaCount",
        imageRepository: "image.repository",
        imageTag: "image.tag",
        port: "service.httpPort",
      },
    },
    values: { redis: { enabled: true } },
    // podinfo's pods (and its redis) set no security context: they meet Pod Security "baseline", not "restricted".
    podSecurityLevel: "Baseline" as const,
  };
  await createInstance(client, namespace, "web", spec);

  // THEN it becomes Ready with the image, and the objects are exactly Helm's
  const ready = await waitForInstance(client, namespace, "web", "Ready", readyWithImage(spec.image), 180_000);
  assert.equal(ready.status?.readyReplicas, 2);
  const expected = await helmTemplate(chart, "web", namespace, {
    replicaCount: 2,
    image: { repository: "ghcr.io/stefanprodan/podinfo", tag: "6.9.2" },
    service: { httpPort: 9898 },
    redis: { enabled: true },
  });
  assert.ok(expected.filter((o) => o.kind === "Deployment").length >= 2, "podinfo + redis Deployments");
  assert.ok(expected.filter((o) => o.kind === "Service").length >= 2, "podinfo + redis Services");
  await assertExactlyHelmObjects(namespace, "web", expected);

  // WHEN the image changes through the spec
  await patchSpec(client, namespace, "web", { image: "ghcr.io/stefanprodan/podinfo:6.9.1" });

  // THEN it rolls out and status.image follows
  await waitForInstance(
    client,
    namespace,
    "web",
    "rolled out",
    readyWithImage("ghcr.io/stefanprodan/podinfo:6.9.1"),
    180_000,
  );
  const deployment = await client.get<Typed<{ spec: { template: { spec: { containers: { image: string }[] } } } }>>(
    "apps/v1",
    "Deployment",
    "web-podinfo",
    namespace,
  );
  assert.equal(deployment.spec.template.spec.containers[0]?.image, "ghcr.io/stefanprodan/podinfo:6.9.1");
});

test("this repository's chart: Ready, a new chart version rolls out and prunes what it no longer renders", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-myapp");
  const source = path.join(repoRoot, "examples/charts/myapp");
  const v1 = await packChart(source);
  // Version 0.2.0: a new appVersion (the image tag, since the instance leaves the tag to the chart) and the
  // settings subchart turned off by default (its ConfigMap must be pruned).
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-v2-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  await cp(source, path.join(work, "myapp"), { recursive: true });
  const chartYaml = path.join(work, "myapp/Chart.yaml");
  await writeFile(
    chartYaml,
    (await readFile(chartYaml, "utf8")).replace("version: 0.1.0", "version: 0.2.0").replace('"1.27"', '"1.28"'),
  );
  const valuesYaml = path.join(work, "myapp/values.yaml");
  await writeFile(
    valuesYaml,
    (await readFile(valuesYaml, "utf8")).replace("settings:\n  enabled: true", "settings:\n  enabled: false"),
  );
  const v2 = await packChart(path.join(work, "myapp"));
  await chartConfigMap(namespace, "myapp-chart-0.1.0", v1);
  await chartConfigMap(namespace, "myapp-chart-0.2.0", v2);
  await operatorFor(t, namespace);

  // GIVEN an instance on chart 0.1.0 whose image tag comes from the chart (imageTag: "")
  const spec = { replicas: 2, image: "nginx", chart: { configMap: "myapp-chart-0.1.0", valuePaths: { imageTag: "" } } };
  await createInstance(client, namespace, "shop", spec);
  await waitForInstance(client, namespace, "shop", "Ready on 0.1.0", readyWithImage("nginx:1.27"), 120_000);
  const values = { replicaCount: 2, image: { repository: "nginx" }, service: { port: 8080 } };
  await assertExactlyHelmObjects(namespace, "shop", await helmTemplate(v1, "shop", namespace, values));
  assert.ok(await client.find("v1", "ConfigMap", "shop-settings", namespace), "the subchart's ConfigMap");

  // WHEN the instance moves to chart 0.2.0
  await patchSpec(client, namespace, "shop", {
    chart: { configMap: "myapp-chart-0.2.0", valuePaths: { imageTag: "" } },
  });

  // THEN the app rolls out to the new image, status.image follows, and the subchart's ConfigMap is pruned
  await waitForInstance(client, namespace, "shop", "Ready on 0.2.0", readyWithImage("nginx:1.28"), 120_000);
  await waitFor(
    "the ConfigMap chart 0.2.0 no longer renders to be pruned",
    async () => ((await client.find("v1", "ConfigMap", "shop-settings", namespace)) ? undefined : true),
    { timeoutMs: 60_000 },
  );
  await assertExactlyHelmObjects(namespace, "shop", await helmTemplate(v2, "shop", namespace, values));
});

test("a chart with a template error makes the instance Degraded, naming the template", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-broken");
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-broken-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  await cp(path.join(repoRoot, "examples/charts/myapp"), path.join(work, "myapp"), { recursive: true });
  await writeFile(
    path.join(work, "myapp/templates/broken.yaml"),
    '{{ required "config.mustSet is required" .Values.config.mustSet }}\n',
  );
  await chartConfigMap(namespace, "broken-chart", await packChart(path.join(work, "myapp")));
  await operatorFor(t, namespace);

  await createInstance(client, namespace, "bad", { image: "nginx:1.27", chart: { configMap: "broken-chart" } });
  const degraded = await waitForInstance(
    client,
    namespace,
    "bad",
    "Degraded",
    (i) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True",
  );
  const condition = conditionOf(degraded, "Degraded");
  assert.equal(condition?.reason, "ChartRenderFailed");
  assert.match(condition?.message ?? "", /myapp\/templates\/broken\.yaml:1/);
  assert.match(condition?.message ?? "", /config\.mustSet is required/);
});

test("a chart that renders a field of the wrong type is Degraded (ChildRejected), not retried as a server error", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-typed");
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-typed-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  await cp(path.join(repoRoot, "examples/charts/myapp"), path.join(work, "myapp"), { recursive: true });
  // A boolean where a ConfigMap holds strings: server-side apply answers 500 "failed to create typed patch object"
  await writeFile(
    path.join(work, "myapp/templates/typed.yaml"),
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-typed\ndata:\n  enabled: true\n",
  );
  await chartConfigMap(namespace, "typed-chart", await packChart(path.join(work, "myapp")));
  await operatorFor(t, namespace);

  await createInstance(client, namespace, "typed", {
    image: "nginx:1.27",
    podSecurityLevel: "Baseline",
    chart: { configMap: "typed-chart" },
  });
  const degraded = await waitForInstance(
    client,
    namespace,
    "typed",
    "Degraded",
    (i) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True",
  );
  const condition = conditionOf(degraded, "Degraded");
  assert.equal(condition?.reason, "ChildRejected");
  assert.match(condition?.message ?? "", /\.data\.enabled: expected string/);
});
