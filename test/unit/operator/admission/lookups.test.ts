/**
 * The lookups' implementation: instances from the informer cache where it covers the namespace, live otherwise;
 * the other reads are the GETs (and one list) recorded here against a fake client.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeClient, KubeObject, ListOptions } from "../../../../kube/index.ts";
import { defaultStorageClass, kubeLookups } from "../../../../operator/admission/lookups.ts";
import type { CacheReader } from "../../../../operator/runtime/cache.ts";

function fakeClient(objects: KubeObject[]) {
  const requests: string[] = [];
  const matches = (object: KubeObject, apiVersion: string, kind: string, namespace?: string) =>
    object.apiVersion === apiVersion && object.kind === kind && object.metadata.namespace === namespace;
  const client = {
    find(apiVersion: string, kind: string, name: string, namespace?: string) {
      requests.push(`GET ${kind} ${namespace ? `${namespace}/` : ""}${name}`);
      return Promise.resolve(
        objects.find((object) => matches(object, apiVersion, kind, namespace) && object.metadata.name === name),
      );
    },
    list(apiVersion: string, kind: string, options: ListOptions = {}) {
      const where = `${options.namespace ? ` ${options.namespace}` : ""}${options.fieldSelector ? ` ${options.fieldSelector}` : ""}`;
      requests.push(`LIST ${kind}${where} rv=${options.resourceVersion ?? ""}`);
      const named = /^metadata\.name=(.*)$/.exec(options.fieldSelector ?? "")?.[1];
      return Promise.resolve({
        metadata: {},
        items: objects.filter(
          (object) =>
            matches(object, apiVersion, kind, options.namespace) &&
            (named === undefined || object.metadata.name === named),
        ),
      });
    },
    async listEach<T>(apiVersion: string, kind: string, options: ListOptions, each: (item: KubeObject) => T) {
      const listed = await client.list(apiVersion, kind, options);
      return { metadata: {}, items: listed.items.map(each) };
    },
  };
  return { client: client as unknown as KubeClient, requests };
}

function fakeCache(covered: string[], objects: KubeObject[]): CacheReader {
  return {
    covers: (_apiVersion, _kind, namespace) => covered.includes(namespace ?? ""),
    get: <T extends KubeObject>(_a: string, _k: string, name: string, namespace?: string) =>
      objects.find((object) => object.metadata.name === name && object.metadata.namespace === namespace) as
        T | undefined,
    list: <T extends KubeObject>(_a: string, _k: string, namespace: string) =>
      objects.filter((object) => object.metadata.namespace === namespace) as T[],
    wrote: () => {},
  };
}

const instance = (name: string, namespace: string): KubeObject => ({
  apiVersion: "example.com/v1",
  kind: "MyAppInstance",
  metadata: { name, namespace },
  spec: { image: "nginx", replicas: 1 },
});

const storageClass = (name: string, extra: Record<string, unknown>, annotations = {}, created = ""): KubeObject => ({
  apiVersion: "storage.k8s.io/v1",
  kind: "StorageClass",
  metadata: { name, annotations, creationTimestamp: created },
  ...extra,
});

describe("kubeLookups", () => {
  it("reads instances from the cache where it covers the namespace, else lists them live from the watch cache", async () => {
    const { client, requests } = fakeClient([instance("live", "team-b")]);
    const lookups = kubeLookups(client, fakeCache(["team-a"], [instance("cached", "team-a")]));
    assert.deepEqual(
      (await lookups.instancesIn("team-a")).map((item) => item.metadata.name),
      ["cached"],
    );
    assert.deepEqual(requests, []);
    assert.deepEqual(
      (await lookups.instancesIn("team-b")).map((item) => item.metadata.name),
      ["live"],
    );
    assert.deepEqual(requests, ["LIST MyAppInstance team-b rv=0"]);
    assert.equal((await lookups.instance("team-a", "cached"))?.metadata.name, "cached");
    assert.equal((await lookups.instance("team-b", "live"))?.metadata.name, "live");
    assert.equal(await lookups.instance("team-b", "none"), undefined);
    // By list, not GET: the operator's role lists instances and has no get on them.
    assert.deepEqual(requests.slice(1), [
      "LIST MyAppInstance team-b metadata.name=live rv=0",
      "LIST MyAppInstance team-b metadata.name=none rv=0",
    ]);
  });

  it("reads a namespace's live usage from storage, not the cache, and its claims afresh, not reused", async () => {
    const claim = (name: string, storage: string): KubeObject => ({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name, namespace: "team-a", labels: { "app.kubernetes.io/instance": "db" } },
      spec: { resources: { requests: { storage } } },
    });
    const stored = {
      ...instance("stored", "team-a"),
      metadata: { name: "stored", namespace: "team-a", deletionTimestamp: "2026-01-01T00:00:00Z", labels: { a: "b" } },
      spec: { image: "nginx", replicas: 2, storage: "1Gi", chart: { configMap: "c" }, values: { a: "x".repeat(1000) } },
      status: { chartUsage: { replicas: 4, storage: "8Gi" }, conditions: [] },
    };
    const objects = [stored, claim("data-db-0", "1Gi")];
    const { client, requests } = fakeClient(objects);
    const lookups = kubeLookups(client, fakeCache(["team-a"], [instance("cached", "team-a")]));
    assert.deepEqual(
      (await lookups.claimsIn("team-a")).map((item) => item.name),
      ["data-db-0"],
    );
    objects.pop();
    const live = await lookups.liveUsageIn("team-a", true);
    // Only what a budget reads is kept of each, not its values.
    assert.deepEqual(
      live.instances.map(({ metadata, spec, status }) => ({ metadata, spec, status })),
      [
        {
          metadata: { name: "stored", namespace: "team-a", deletionTimestamp: "2026-01-01T00:00:00Z" },
          spec: { replicas: 2, storage: "1Gi", chart: { configMap: "c" } },
          status: { chartUsage: { replicas: 4, storage: "8Gi" } },
        },
      ],
    );
    assert.deepEqual(live.claims, [], "the claim deleted since the first list");
    assert.deepEqual((await lookups.liveUsageIn("team-a", false)).claims, []);
    assert.deepEqual(requests, [
      "LIST PersistentVolumeClaim team-a rv=",
      "LIST MyAppInstance team-a rv=",
      "LIST PersistentVolumeClaim team-a rv=",
      "LIST MyAppInstance team-a rv=",
    ]);
  });

  it("reads a chart's claims by their StatefulSets' names where a chart's StatefulSet makes claims", async () => {
    const claim = (name: string, labels: Record<string, string>): KubeObject => ({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name, namespace: "team-a", labels },
      spec: { resources: { requests: { storage: "2Gi" } } },
    });
    const operators = { "app.kubernetes.io/managed-by": "myapp-operator", "app.kubernetes.io/name": "myapp" };
    const { client, requests } = fakeClient([
      claim("data-web-0", { ...operators, "app.kubernetes.io/instance": "web" }),
      claim("data-store-3", { app: "store" }),
      claim("scratch", { app: "store" }),
    ]);
    // GIVEN the cache holds chart instance store's StatefulSet, with claim template "data"
    const statefulSet: KubeObject = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: {
        name: "store",
        namespace: "team-a",
        uid: "s",
        labels: { "myapp.example.com/chart-instance": "store" },
        ownerReferences: [
          { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "store", uid: "i", controller: true },
        ],
      },
      spec: { volumeClaimTemplates: [{ metadata: { name: "data" } }] },
    };
    const lookups = kubeLookups(client, fakeCache(["team-a"], [statefulSet]));
    // THEN every claim is listed, and the operator's and the chart's kept: the chart's tied to its instance
    assert.deepEqual(await lookups.claimsIn("team-a"), [
      { name: "data-web-0", instance: "web", storage: "2Gi" },
      { name: "data-store-3", instance: undefined, storage: "2Gi", chartInstance: "store" },
    ]);
    assert.deepEqual(requests, ["LIST PersistentVolumeClaim team-a rv="]);
  });

  it("reads afresh after each call, shared by the calls while a read runs: a Namespace, a namespace's usage", async () => {
    const { client, requests } = fakeClient([
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a", labels: { a: "1" } } },
      instance("web", "team-a"),
    ]);
    const lookups = kubeLookups(client, fakeCache(["team-a"], []));
    await lookups.namespace("team-a");
    await lookups.freshNamespace("team-a");
    await lookups.freshNamespace("team-a");
    assert.deepEqual(requests.splice(0), ["GET Namespace team-a", "GET Namespace team-a", "GET Namespace team-a"]);
    // A burst of refusals at once: one list, begun after them all (fresh-reads.test.ts: and one after a running one).
    const burst = await Promise.all(Array.from({ length: 50 }, () => lookups.liveUsageIn("team-a", true)));
    assert.equal(burst.length, 50);
    assert.deepEqual(requests, ["LIST MyAppInstance team-a rv=", "LIST PersistentVolumeClaim team-a rv="]);
  });

  it("reads a Namespace's labels, a StorageClass and a ConfigMap's binaryData keys by GET", async () => {
    const { client, requests } = fakeClient([
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: "team-a",
          labels: { a: "1", "myapp.example.com/max-replicas": "4" },
          annotations: { b: "2" },
        },
      },
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "bare" } },
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "team-b", annotations: { "myapp.example.com/chart-sources": "oci://ghcr.io/team-b/" } },
      },
      storageClass("fast", { allowVolumeExpansion: true }),
      storageClass("slow", {}),
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "web-chart", namespace: "team-a" },
        binaryData: { "chart.tgz": "H4sI" },
        data: { "notes.txt": "x" },
      },
    ]);
    const lookups = kubeLookups(client, fakeCache([], []));
    assert.deepEqual(await lookups.namespace("team-a"), { labels: { a: "1", "myapp.example.com/max-replicas": "4" } });
    assert.deepEqual(await lookups.namespace("bare"), { labels: {} });
    assert.deepEqual(await lookups.namespace("team-b"), { labels: {}, chartSources: "oci://ghcr.io/team-b/" });
    assert.equal(await lookups.namespace("none"), undefined);
    assert.deepEqual(await lookups.storageClass("fast"), { name: "fast", allowVolumeExpansion: true });
    assert.deepEqual(await lookups.storageClass("slow"), { name: "slow" });
    assert.equal(await lookups.storageClass("none"), undefined);
    assert.deepEqual(await lookups.chartConfigMap("team-a", "web-chart"), { keys: ["chart.tgz"] });
    assert.equal(await lookups.chartConfigMap("team-b", "web-chart"), undefined);
    assert.deepEqual(requests, [
      "GET Namespace team-a",
      "GET Namespace bare",
      "GET Namespace team-b",
      "GET Namespace none",
      "GET StorageClass fast",
      "GET StorageClass slow",
      "GET StorageClass none",
      "GET ConfigMap team-a/web-chart",
      "GET ConfigMap team-b/web-chart",
    ]);
  });

  it("finds the default StorageClass: the newest of those marked, either annotation", async () => {
    const marked = { "storageclass.kubernetes.io/is-default-class": "true" };
    const beta = { "storageclass.beta.kubernetes.io/is-default-class": "true" };
    const classes = [
      storageClass("old", {}, marked, "2024-01-01T00:00:00Z"),
      storageClass("new", { allowVolumeExpansion: false }, beta, "2025-01-01T00:00:00Z"),
      storageClass(
        "newest-unmarked",
        {},
        { "storageclass.kubernetes.io/is-default-class": "false" },
        "2026-01-01T00:00:00Z",
      ),
    ];
    assert.equal(defaultStorageClass(classes)?.metadata.name, "new");
    assert.equal(defaultStorageClass([classes[2]!]), undefined);
    const { client } = fakeClient(classes);
    assert.deepEqual(await kubeLookups(client, fakeCache([], [])).defaultStorageClass(), {
      name: "new",
      allowVolumeExpansion: false,
    });
  });

  it("reads a chart ConfigMap once for concurrent reviews, keeps only whether it holds a chart, and reuses only that", async () => {
    const big = (name: string, keys: string[]): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: "team-a" },
      binaryData: Object.fromEntries(keys.map((key) => [key, "x".repeat(100_000)])),
    });
    const { client, requests } = fakeClient([big("chart", ["chart.tgz", "other.bin"]), big("wrong", ["other.bin"])]);
    let now = 0;
    const lookups = kubeLookups(client, fakeCache([], []), { ttlMs: 5_000, clock: { monotonicMs: () => now } });
    const answers = await Promise.all(Array.from({ length: 100 }, () => lookups.chartConfigMap("team-a", "chart")));
    assert.ok(answers.every((answer) => JSON.stringify(answer) === JSON.stringify({ keys: ["chart.tgz"] })));
    assert.deepEqual(await lookups.chartConfigMap("team-a", "chart"), { keys: ["chart.tgz"] });
    assert.deepEqual(requests, ["GET ConfigMap team-a/chart"], "one GET for 101 reviews");
    // One without a chart, or none at all, is read afresh: its tenant may be fixing it right now.
    assert.deepEqual(await lookups.chartConfigMap("team-a", "wrong"), { keys: [] });
    assert.deepEqual(await lookups.chartConfigMap("team-a", "wrong"), { keys: [] });
    assert.equal(await lookups.chartConfigMap("team-a", "none"), undefined);
    assert.equal(await lookups.chartConfigMap("team-a", "none"), undefined);
    now = 5_000;
    await lookups.chartConfigMap("team-a", "chart");
    assert.deepEqual(requests.slice(1), [
      "GET ConfigMap team-a/wrong",
      "GET ConfigMap team-a/wrong",
      "GET ConfigMap team-a/none",
      "GET ConfigMap team-a/none",
      "GET ConfigMap team-a/chart",
    ]);
  });

  it("holds at most a few reads in flight, whatever the reviews ask, and reads a remembered write live", async () => {
    const { client, requests } = fakeClient([instance("web", "team-a")]);
    let inFlight = 0;
    let most = 0;
    const slowFind = client.find.bind(client);
    const release: (() => void)[] = [];
    client.find = (async (...args: Parameters<KubeClient["find"]>) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => release.push(resolve));
      inFlight--;
      return slowFind(...args);
    }) as KubeClient["find"];
    const lookups = kubeLookups(client, fakeCache(["team-a"], []), {}, { maxInFlight: 4 });
    const answers = Promise.all(Array.from({ length: 50 }, (_, i) => lookups.chartConfigMap("team-a", `cm-${i}`)));
    while (release.length > 0 || inFlight > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      release.splice(0).forEach((resolve) => resolve());
    }
    assert.equal((await answers).length, 50);
    assert.equal(most, 4);
    // The cache covers team-a and shows nothing; the live read asks storage (no resourceVersion).
    assert.equal(await lookups.instance("team-a", "web"), undefined);
    assert.equal((await lookups.liveInstance("team-a", "web"))?.metadata.name, "web");
    assert.equal(requests.at(-1), "LIST MyAppInstance team-a metadata.name=web rv=");
  });
});
