/**
 * Chart sources besides ConfigMaps, served on 127.0.0.1 by the test: an OCI registry (the chart pushed with the
 * real `helm push`) and an HTTP chart repository, both on the operator's allow-list (`--chart-sources`; loopback
 * is reachable only because the list names it). Instances using either become Ready; a digest pin that does not
 * match is Degraded naming the source; a source off the list is Degraded (ChartSourceNotAllowed) without a request;
 * a source that cannot be reached is retried and reported Stalled, never Degraded. A namespace's chart-sources
 * annotation narrows the list for its instances; once the platform owner lifts it, they heal by themselves.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { namespaceChartSourcesAnnotation } from "../../api/index.ts";
import { chartDigest } from "../../chart/index.ts";
import { startChartRepository, startOciRegistry } from "../support/chart-repos.ts";
import { adminClient, testNamespace } from "../support/cluster.ts";
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

const ready = (image: string) => (i: Instance) =>
  isCurrent(i) && conditionOf(i, "Ready")?.status === "True" && i.status?.image === image;
const degraded = (i: Instance) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "True";

test("charts from allowed OCI and HTTP sources; a wrong digest or a source off the list (the platform's or the namespace's) is Degraded, an unreachable one Stalled", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-sources");
  const chart = await packChart(chartDir);
  const registry = await startOciRegistry();
  t.after(() => registry.close());
  const repository = await startChartRepository();
  t.after(() => repository.close());
  const work = await mkdtemp(path.join(tmpdir(), "myapp-chart-push-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  await writeFile(path.join(work, "myapp-0.1.0.tgz"), chart);
  await helm(["push", path.join(work, "myapp-0.1.0.tgz"), `oci://${registry.host}/charts`, "--plain-http"]);
  repository.publish("myapp", "0.1.0", chart);
  const offList = await startChartRepository();
  t.after(() => offList.close());
  offList.publish("myapp", "0.1.0", chart);
  // A namespace whose annotation narrows the platform's list to the OCI registry.
  const narrowed = await testNamespace(t, client, "op-chart-narrowed");
  await client.mergePatch("v1", "Namespace", narrowed, undefined, {
    metadata: { annotations: { [namespaceChartSourcesAnnotation]: `oci://${registry.host}/charts/` } },
  });
  await startOperator(t, {
    namespaces: [namespace, narrowed],
    args: [
      `--helm=${await helmBinary()}`,
      `--chart-sources=oci://${registry.host}/charts/,${repository.url}/,oci://127.0.0.1:1/`,
      // Few fast retries, so the unreachable source is reported Stalled within the test's wait.
      "--max-consecutive-failures=3",
      // A verdict caused outside the spec (the namespace's annotation) is looked at again every 2 s, not 5 min.
      "--slow-retry-interval=2",
    ],
  });

  // GIVEN one instance per source, the repository one pinned by digest
  await createInstance(client, namespace, "from-oci", {
    image: "nginx:1.27",
    chart: { oci: `oci://${registry.host}/charts/myapp`, version: "0.1.0" },
  });
  await createInstance(client, namespace, "from-repo", {
    image: "nginx:1.26",
    chart: { repo: repository.url, name: "myapp", version: "0.1.0", digest: chartDigest(chart) },
  });
  const wrongDigest = `sha256:${"0".repeat(64)}`;
  await createInstance(client, namespace, "pinned-wrong", {
    image: "nginx:1.27",
    chart: { repo: repository.url, name: "myapp", version: "0.1.0", digest: wrongDigest },
  });
  await createInstance(client, namespace, "off-the-list", {
    image: "nginx:1.27",
    chart: { repo: offList.url, name: "myapp", version: "0.1.0" },
  });
  await createInstance(client, namespace, "unreachable", {
    image: "nginx:1.27",
    chart: { oci: "oci://127.0.0.1:1/charts/myapp", version: "0.1.0" },
  });

  await createInstance(client, narrowed, "from-oci", {
    image: "nginx:1.27",
    chart: { oci: `oci://${registry.host}/charts/myapp`, version: "0.1.0" },
  });
  await createInstance(client, narrowed, "from-repo", {
    image: "nginx:1.26",
    chart: { repo: repository.url, name: "myapp", version: "0.1.0" },
  });

  // THEN the first two become Ready from their charts
  await waitForInstance(client, namespace, "from-oci", "Ready from the OCI registry", ready("nginx:1.27"), 120_000);
  await waitForInstance(client, namespace, "from-repo", "Ready from the repository", ready("nginx:1.26"), 120_000);
  assert.ok(registry.requests.some((r) => r.startsWith("GET /v2/charts/myapp/manifests/0.1.0")));
  assert.ok(repository.requests.includes("GET /index.yaml"));

  // AND the others are Degraded, naming the source
  const mismatch = conditionOf(
    await waitForInstance(client, namespace, "pinned-wrong", "Degraded", degraded),
    "Degraded",
  );
  assert.equal(mismatch?.reason, "ChartDigestMismatch");
  assert.match(
    mismatch?.message ?? "",
    new RegExp(`myapp 0\\.1\\.0 from ${repository.url}.*not the pinned ${wrongDigest}`),
  );
  const refused = conditionOf(
    await waitForInstance(client, namespace, "off-the-list", "Degraded", degraded),
    "Degraded",
  );
  assert.equal(refused?.reason, "ChartSourceNotAllowed");
  assert.match(refused?.message ?? "", /--chart-sources/);
  assert.deepEqual(offList.requests, [], "no request to a source off the list");

  // AND in the narrowed namespace the registry serves, but the repository the platform allows is refused, naming
  // the namespace's annotation
  await waitForInstance(client, narrowed, "from-oci", "Ready in the narrowed namespace", ready("nginx:1.27"), 120_000);
  const narrowedAway = conditionOf(
    await waitForInstance(client, narrowed, "from-repo", "Degraded in the narrowed namespace", degraded),
    "Degraded",
  );
  assert.equal(narrowedAway?.reason, "ChartSourceNotAllowed");
  assert.match(
    narrowedAway?.message ?? "",
    new RegExp(`in namespace ${narrowed}: its annotation myapp\\.example\\.com/chart-sources allows oci://`),
  );

  // AND once the platform owner lifts the annotation, the operator's slow look brings it up by itself: no change
  // to the instance, no reconcile request
  await client.mergePatch("v1", "Namespace", narrowed, undefined, {
    metadata: { annotations: { [namespaceChartSourcesAnnotation]: null } },
  });
  const healed = await waitForInstance(
    client,
    narrowed,
    "from-repo",
    "Ready once the annotation is gone",
    ready("nginx:1.26"),
    120_000,
  );
  assert.equal(healed.metadata.generation, 1);
  assert.equal(healed.status?.lastHandledReconcileAt, undefined, "no reconcile request was made");

  // AND the unreachable source is retried: Stalled (TransientFailure) naming it, never Degraded
  // Nothing was observed yet, so the status carries only the Stalled condition (no observedGeneration).
  const stalled = (i: Instance) => conditionOf(i, "Stalled")?.status === "True";
  const down = await waitForInstance(client, namespace, "unreachable", "Stalled", stalled, 120_000);
  assert.equal(conditionOf(down, "Stalled")?.reason, "TransientFailure");
  assert.match(conditionOf(down, "Stalled")?.message ?? "", /oci:\/\/127\.0\.0\.1:1\/charts\/myapp:0\.1\.0/);
  assert.notEqual(conditionOf(down, "Degraded")?.status, "True");
});
