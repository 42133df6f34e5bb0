/**
 * Least privilege for charts, with the operator running on its ServiceAccount's token and exactly the Role the
 * component grants for a narrowed allow-list (MyAppOperator chartKinds): a chart within the list reaches Ready,
 * and a render with a kind outside it (an Ingress) is refused with ChartKindNotAllowed, an object the operator
 * could not have created anyway. With remote chart sources and no webhooks, the component's ClusterRole lets the
 * operator read its Namespace's chart-sources annotation.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { namespaceChartSourcesAnnotation } from "../../api/index.ts";
import { chartKindsFlag } from "../../components/chart-kinds.ts";
import { operatorObjectNames } from "../../components/metadata.ts";
import { operatorRbac } from "../../components/rbac-objects.ts";
import { resolveSettings } from "../../components/settings.ts";
import { serviceAccountKubeconfig } from "../../components/index.ts";
import { ForbiddenError, KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace } from "../support/cluster.ts";
import { startOciRegistry } from "../support/chart-repos.ts";
import { helm, helmBinary, packChart } from "../support/helm.ts";
import {
  conditionOf,
  createInstance,
  isCurrent,
  startOperator,
  waitForInstance,
  type Instance,
} from "../support/operator.ts";

const client = adminClient();
const chartDir = path.resolve(import.meta.dirname, "../../examples/charts/myapp");

const readyAt = (image: string) => (i: Instance) =>
  isCurrent(i) && conditionOf(i, "Ready")?.status === "True" && i.status?.image === image;
const degraded = (i: Instance) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True";

test("with a narrowed chart allow-list, the ServiceAccount's Role suffices and other kinds are refused", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-rbac");
  const resolved = resolveSettings("op", {
    namespace,
    watchNamespaces: [namespace],
    chartKinds: ["apps/v1/Deployment", "v1/Service", "v1/ConfigMap"],
    image: "registry.example/myapp-operator:test",
  });
  assert.ok(resolved.ok);
  const settings = resolved.settings;
  const serviceAccount = operatorObjectNames(settings).serviceAccount;
  await client.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: serviceAccount, namespace } });
  const grant = operatorRbac(settings).watchedNamespaceGrants[0];
  assert.ok(grant);
  await client.create(grant.role as unknown as KubeObject);
  await client.create(grant.binding as unknown as KubeObject);

  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-rbac-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  const kubeconfig = path.join(work, "kubeconfig");
  await writeFile(kubeconfig, await serviceAccountKubeconfig(client, namespace, serviceAccount));
  const operatorClient = new KubeClient(loadKubeConfig({ path: kubeconfig }));
  await assert.rejects(
    operatorClient.create({ apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "x", namespace } }),
    ForbiddenError,
    "the Role grants no Ingress",
  );

  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "myapp-chart", namespace },
    binaryData: { "chart.tgz": (await packChart(chartDir)).toString("base64") },
  });
  await startOperator(t, {
    namespaces: [namespace],
    leaderElection: false,
    args: [`--kubeconfig=${kubeconfig}`, `--helm=${await helmBinary()}`, ...chartKindsFlag(settings.chartKinds)],
  });

  await createInstance(client, namespace, "allowed", { image: "nginx:1.27", chart: { configMap: "myapp-chart" } });
  await createInstance(client, namespace, "with-ingress", {
    image: "nginx:1.27",
    chart: { configMap: "myapp-chart" },
    values: { ingress: { enabled: true } },
  });

  await waitForInstance(
    client,
    namespace,
    "allowed",
    "Ready on the ServiceAccount's token",
    readyAt("nginx:1.27"),
    120_000,
  );
  const refused = await waitForInstance(client, namespace, "with-ingress", "Degraded", degraded);
  assert.equal(conditionOf(refused, "Degraded")?.reason, "ChartKindNotAllowed");
  assert.match(
    conditionOf(refused, "Degraded")?.message ?? "",
    /myapp\/templates\/ingress\.yaml renders Ingress\/with-ingress/,
  );
});

test("with remote chart sources and no webhooks, the component's grants let the operator read its namespace's narrowed list", async (t) => {
  // GIVEN the grants of a platform that allows one registry path and runs no webhooks
  const namespace = await testNamespace(t, client, "op-chart-srcs");
  const registry = await startOciRegistry();
  t.after(() => registry.close());
  const resolved = resolveSettings(namespace, {
    namespace,
    watchNamespaces: [namespace],
    chartSources: [`oci://${registry.host}/charts/`],
    // The example chart renders a ConfigMap.
    chartKinds: ["apps/v1/Deployment", "v1/Service", "v1/ConfigMap"],
    webhooks: { enabled: false },
    image: "registry.example/myapp-operator:test",
  });
  assert.ok(resolved.ok);
  const settings = resolved.settings;
  const serviceAccount = operatorObjectNames(settings).serviceAccount;
  await client.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: serviceAccount, namespace } });
  const rbac = operatorRbac(settings);
  const grant = rbac.watchedNamespaceGrants[0];
  assert.ok(grant);
  for (const object of [grant.role, grant.binding, rbac.clusterRole, rbac.clusterRoleBinding]) {
    await client.create(object as unknown as KubeObject);
  }
  const clusterRole = operatorObjectNames(settings).clusterRole;
  t.after(async () => {
    await client.delete("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", clusterRole);
    await client.delete("rbac.authorization.k8s.io/v1", "ClusterRole", clusterRole);
  });
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-rbac-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  const kubeconfig = path.join(work, "kubeconfig");
  await writeFile(kubeconfig, await serviceAccountKubeconfig(client, namespace, serviceAccount));
  // ... two charts in the registry, and the namespace narrowed to one team's part of the path
  const packed = path.join(work, "myapp-0.1.0.tgz");
  await writeFile(packed, await packChart(chartDir));
  for (const team of ["team-a", "team-b"]) {
    await helm(["push", packed, `oci://${registry.host}/charts/${team}`, "--plain-http"]);
  }
  await client.mergePatch("v1", "Namespace", namespace, undefined, {
    metadata: { annotations: { [namespaceChartSourcesAnnotation]: `oci://${registry.host}/charts/team-a/` } },
  });
  await startOperator(t, {
    namespaces: [namespace],
    leaderElection: false,
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--helm=${await helmBinary()}`,
      ...chartKindsFlag(settings.chartKinds),
      `--chart-sources=${settings.chartSources.join(",")}`,
    ],
  });
  const pushed = registry.requests.length;

  // WHEN an instance uses each team's chart
  for (const team of ["team-a", "team-b"]) {
    await createInstance(client, namespace, team, {
      image: "nginx:1.27",
      chart: { oci: `oci://${registry.host}/charts/${team}/myapp`, version: "0.1.0" },
    });
  }

  // THEN the namespace's own team's chart is Ready on the ServiceAccount's token, and the other refused by name
  await waitForInstance(
    client,
    namespace,
    "team-a",
    "Ready on the ServiceAccount's token",
    readyAt("nginx:1.27"),
    120_000,
  );
  const refused = await waitForInstance(client, namespace, "team-b", "Degraded", degraded);
  assert.equal(conditionOf(refused, "Degraded")?.reason, "ChartSourceNotAllowed");
  assert.match(
    conditionOf(refused, "Degraded")?.message ?? "",
    new RegExp(`in namespace ${namespace}: its annotation`),
  );
  assert.ok(
    !registry.requests.slice(pushed).some((request) => request.includes("/charts/team-b/")),
    "no request for the chart the namespace does not allow",
  );
});
