/**
 * Least privilege for charts, with the operator running on its ServiceAccount's token and exactly the Role the
 * component grants for a narrowed allow-list (MyAppOperator chartKinds): a chart within the list reaches Ready,
 * and a render with a kind outside it (an Ingress) is refused with ChartKindNotAllowed, an object the operator
 * could not have created anyway.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { chartKindsFlag } from "../../components/chart-kinds.ts";
import { operatorObjectNames } from "../../components/metadata.ts";
import { operatorRbac } from "../../components/rbac-objects.ts";
import { resolveSettings } from "../../components/settings.ts";
import { serviceAccountKubeconfig } from "../../components/index.ts";
import { ForbiddenError, KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace } from "../support/cluster.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import { conditionOf, createInstance, isCurrent, startOperator, waitForInstance } from "../support/operator.ts";

const client = adminClient();
const chartDir = path.resolve(import.meta.dirname, "../../examples/charts/myapp");

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
    (i) => isCurrent(i) && conditionOf(i, "Ready")?.status === "True" && i.status?.image === "nginx:1.27",
    120_000,
  );
  const refused = await waitForInstance(
    client,
    namespace,
    "with-ingress",
    "Degraded",
    (i) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True",
  );
  assert.equal(conditionOf(refused, "Degraded")?.reason, "ChartKindNotAllowed");
  assert.match(
    conditionOf(refused, "Degraded")?.message ?? "",
    /myapp\/templates\/ingress\.yaml renders Ingress\/with-ingress/,
  );
});
