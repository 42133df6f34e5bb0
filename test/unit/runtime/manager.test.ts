/** startManager against a scripted local apiserver: the wiring, not the parts (each has its own tests). */
import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { it, type TestContext } from "node:test";
import type { KubeObject } from "../../../kube/index.ts";
import { startManager } from "../../../operator/runtime/manager.ts";
import { captureLogger } from "./capture-logger.ts";

/**
 * A local apiserver that answers every list with one ConfigMap, `deployments` or nothing, and holds every watch
 * open.
 */
async function scriptedApiserver(
  t: TestContext,
  deployments: readonly unknown[] = [],
  configMaps: readonly unknown[] = [
    { metadata: { name: "item", namespace: "ns", resourceVersion: "5", labels: { app: "x" } }, data: { a: "b" } },
  ],
) {
  const requests: string[] = [];
  const watches = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "", "http://x");
    requests.push(`${request.method} ${url.pathname}${url.searchParams.has("watch") ? " watch" : ""}`);
    if (url.searchParams.has("watch")) {
      response.writeHead(200, { "content-type": "application/json" });
      response.flushHeaders();
      watches.add(response);
      return;
    }
    const items = url.pathname.endsWith("/configmaps")
      ? configMaps
      : url.pathname.endsWith("/deployments")
        ? deployments
        : [];
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ metadata: { resourceVersion: "10" }, items }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const watch of watches) watch.destroy();
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  const kubeconfig = `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c`;

  return { requests, watches, kubeconfig };
}

/** The options every test's manager has alike: its name and identity, the scripted apiserver, free ports. */
function fixed(kubeconfig: string) {
  return {
    name: "test",
    logger: captureLogger().logger,
    identity: "test-1",
    kubeconfig: { kubeconfig },
    probeAddress: { host: "127.0.0.1", port: 0 },
    metricsAddress: { host: "127.0.0.1", port: 0 },
    reportingController: "example.com/test",
    fieldManager: "test",
  };
}

it("lists and watches the kinds, reconciles from the cache, serves probes and metrics, and stops cleanly", async (t) => {
  const { requests, watches, kubeconfig } = await scriptedApiserver(t);

  const seen: (KubeObject | undefined)[] = [];
  const manager = await startManager(
    {
      ...fixed(kubeconfig),
      for: { apiVersion: "v1", kind: "ConfigMap", labelSelector: "app=x" },
      owns: [{ apiVersion: "apps/v1", kind: "Deployment" }],
      namespaces: ["ns"],
    },
    ({ cache }) => ({
      reconcile: async ({ namespace, name }) => {
        seen.push(cache.get("v1", "ConfigMap", name, namespace));
        return {};
      },
    }),
  );
  t.after(() => manager.stop());
  const deadline = Date.now() + 10_000;
  while ((seen.length === 0 || watches.size < 2) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  assert.equal(seen[0]?.metadata.name, "item", "the reconcile read the object from the cache");
  assert.deepEqual(
    requests.filter((r) => r.startsWith("GET")).sort(),
    [
      "GET /api/v1/namespaces/ns/configmaps",
      "GET /api/v1/namespaces/ns/configmaps watch",
      "GET /apis/apps/v1/namespaces/ns/deployments",
      "GET /apis/apps/v1/namespaces/ns/deployments watch",
    ],
    "one list and one watch per kind, no GETs",
  );
  const readyz = await fetch(`http://127.0.0.1:${manager.probePort}/readyz`);
  assert.equal(readyz.status, 200);
  const metrics = await (await fetch(`http://127.0.0.1:${manager.metricsPort}/metrics`)).text();
  assert.match(metrics, /controller_runtime_reconcile_total\{controller="test",result="success"\} 1/);

  const { drained } = await manager.stop();
  assert.equal(drained, true);
});

it("looks at every object when its workers start, first those the start priority says are waiting", async (t) => {
  // GIVEN three objects listed in this order, of which the last still waits for its change to be carried out
  const item = (name: string) => ({ metadata: { name, namespace: "ns", resourceVersion: "5" }, data: {} });
  const { kubeconfig } = await scriptedApiserver(t, [], [item("a"), item("b"), item("changed")]);
  const seen: string[] = [];
  const manager = await startManager(
    {
      ...fixed(kubeconfig),
      for: { apiVersion: "v1", kind: "ConfigMap" },
      namespaces: ["ns"],
      concurrency: 1,
      startPriority: (object) => (object.metadata.name === "changed" ? "normal" : "low"),
    },
    () => ({
      reconcile: async ({ name }) => {
        seen.push(name);
        return {};
      },
    }),
  );
  t.after(() => manager.stop());
  const deadline = Date.now() + 10_000;
  while (seen.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  // THEN each is looked at once, the waiting one first
  assert.deepEqual(seen, ["changed", "a", "b"]);
});

it("gives every informer its own /readyz line: one per kind and namespace", async (t) => {
  // GIVEN an operator watching two namespaces, so two informers of each kind
  const { watches, kubeconfig } = await scriptedApiserver(t);
  const manager = await startManager(
    {
      ...fixed(kubeconfig),
      for: { apiVersion: "v1", kind: "ConfigMap" },
      owns: [{ apiVersion: "apps/v1", kind: "Deployment" }],
      watches: [{ apiVersion: "apps/v1", kind: "Deployment", labelSelector: "cached=yes" }],
      namespaces: ["a", "b"],
    },
    () => ({ reconcile: async () => ({}) }),
  );
  t.after(() => manager.stop());
  const deadline = Date.now() + 10_000;
  while (watches.size < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  // WHEN /readyz is asked for its checks
  const body = await (await fetch(`http://127.0.0.1:${manager.probePort}/readyz?verbose`)).text();
  // THEN each of the six informers has a line of its own
  const names = body
    .split("\n")
    .filter((line) => line.startsWith("[+]") || line.startsWith("[-]"))
    .map((line) => line.slice(3).split(" ")[0]);
  assert.deepEqual(names.sort(), [
    "informer-ConfigMap/a",
    "informer-ConfigMap/b",
    "informer-Deployment.apps/a",
    "informer-Deployment.apps/a#2",
    "informer-Deployment.apps/b",
    "informer-Deployment.apps/b#2",
  ]);
});

it("caches each kind's objects as its transform keeps them", async (t) => {
  const deployment = {
    metadata: { name: "d", namespace: "ns", resourceVersion: "6", annotations: { big: "x".repeat(1000) } },
    spec: { replicas: 1 },
  };
  const { watches, kubeconfig } = await scriptedApiserver(t, [deployment]);
  const manager = await startManager(
    {
      ...fixed(kubeconfig),
      for: { apiVersion: "v1", kind: "ConfigMap" },
      owns: [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          transform: ({ apiVersion, kind, metadata }) => ({
            apiVersion,
            kind,
            metadata: { name: metadata.name, namespace: metadata.namespace, resourceVersion: metadata.resourceVersion },
          }),
        },
      ],
      namespaces: ["ns"],
    },
    () => ({ reconcile: async () => ({}) }),
  );
  t.after(() => manager.stop());
  const deadline = Date.now() + 10_000;
  while (watches.size < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));

  assert.deepEqual(
    manager.cache.get("apps/v1", "Deployment", "d", "ns"),
    { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "ns", resourceVersion: "6" } },
    "the transform's result, not the object as listed",
  );
  assert.equal(manager.cache.get("v1", "ConfigMap", "item", "ns")?.["data"] !== undefined, true, "others whole");
});
