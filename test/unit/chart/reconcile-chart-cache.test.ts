/**
 * The chart step against what the informer cache keeps of a chart's objects (operator/watched-kinds.ts and
 * operator/chart/rendered-children.ts): a tenant's objects that say they are an instance's chart (its label, its
 * controller reference, uid and all) are kept as identities whether or not the chart ever renders, while what the
 * render names is kept whole, so a converged instance reads nothing live and writes nothing; after a restart the
 * objects are read live once; a hand edit is put back. The cache is simulated over the FakeCluster: each version of
 * an object is transformed once, when the watch delivers it.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderableChartKinds } from "../../../api/index.ts";
import { ChartFetchError, type ChartRenderer } from "../../../chart/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import { isContentWithheld, RenderedChildren } from "../../../operator/chart/index.ts";
import { TransientError } from "../../../operator/reconcile/index.ts";
import type { WatchedKind } from "../../../operator/runtime/index.ts";
import { watchedOwnedKinds } from "../../../operator/watched-kinds.ts";
import type { FakeCluster } from "../reconcile/fake-cluster.ts";
import { harness } from "../reconcile/setup.ts";

/** A Deployment (not named like the instance, as podinfo's web-podinfo) and a ConfigMap. */
const manifest = `---
# Source: app/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-app
spec:
  replicas: 1
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      securityContext: { runAsNonRoot: true, seccompProfile: { type: RuntimeDefault } }
      containers:
        - name: main
          image: nginx:1.27
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  a: "1"
`;

/**
 * The informers' stores over `cluster`: reads that are not live see each object as its kind's transform kept it
 * when the watch delivered that version (`deliver`: now; an object the reconcile just wrote: at its first read,
 * which comes after the render was recorded, as the watch's event does).
 */
class SimulatedCache {
  private kinds: WatchedKind[] = [];
  private readonly stored = new Map<string, KubeObject>();
  private readonly list: FakeCluster["list"];
  private readonly find: FakeCluster["find"];

  constructor(cluster: FakeCluster, rendered: RenderedChildren) {
    this.kinds = watchedOwnedKinds(renderableChartKinds, rendered);
    this.list = cluster.list.bind(cluster);
    this.find = cluster.find.bind(cluster);
    cluster.list = async <T extends KubeObject>(...args: Parameters<FakeCluster["list"]>) => {
      const [apiVersion, kind] = args;
      const objects = await this.list<T>(...args);
      return objects.map((object) => this.view({ ...object, apiVersion, kind }) as T);
    };
    cluster.find = async <T extends KubeObject>(...args: Parameters<FakeCluster["find"]>) => {
      const object = await this.find<T>(...args);
      return object && !args[4]?.live ? (this.view(object) as T) : object;
    };
  }

  /** The watch delivers every object's current version now (the first list after a start, or events). */
  async deliver(): Promise<void> {
    for (const { apiVersion, kind } of this.kinds) {
      for (const object of await this.list(apiVersion, kind, "default", "")) this.view({ ...object, apiVersion, kind });
    }
  }

  /** The operator starts again: an empty render record, and every object listed before anything renders. */
  async restart(rendered: RenderedChildren): Promise<void> {
    this.kinds = watchedOwnedKinds(renderableChartKinds, rendered);
    this.stored.clear();
    await this.deliver();
  }

  private view(object: KubeObject): KubeObject {
    const transform = this.kinds.find((k) => k.apiVersion === object.apiVersion && k.kind === object.kind)?.transform;
    if (!transform) return object;
    const key = `${object.apiVersion}/${object.kind}/${object.metadata.name ?? ""}`;
    const known = this.stored.get(key);
    if (known && known.metadata.resourceVersion === object.metadata.resourceVersion) return structuredClone(known);
    const kept = transform(object);
    this.stored.set(key, kept);
    return structuredClone(kept);
  }
}

function setup() {
  const h = harness();
  const rendered = new RenderedChildren();
  const renderer: ChartRenderer = { render: async () => ({ manifest, hooks: [], crds: [] }) };
  Object.assign(h.deps, {
    chart: {
      renderer,
      // holder's chart never comes: a ConfigMap that does not exist, retried without end.
      fetchChart: async (chart: { configMap?: string }) => {
        if (chart.configMap === "no-such-chart") {
          throw new ChartFetchError("ConfigMap default/no-such-chart not found", "ChartFetchFailed", {
            transient: true,
          });
        }
        return new Uint8Array([1]);
      },
      allowedKinds: renderableChartKinds,
      renderedChildren: rendered,
    },
  });
  const cache = new SimulatedCache(h.cluster, rendered);
  /** The cached copy of an object, as a reconcile reads it. */
  const cached = (apiVersion: string, kind: string, name: string) => h.cluster.find(apiVersion, kind, name, "default");
  return { h, cache, cached };
}

/** `count` ConfigMaps of 1 MB that say they are `owner`'s chart's, as a tenant who may create ConfigMaps writes them. */
function forge(cluster: FakeCluster, owner: KubeObject, count: number): void {
  for (let n = 0; n < count; n += 1) {
    cluster.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: `forged-${n}`,
        namespace: "default",
        labels: {
          "app.kubernetes.io/managed-by": "myapp-operator",
          "myapp.example.com/chart-instance": owner.metadata.name ?? "",
        },
        ownerReferences: [
          {
            apiVersion: owner.apiVersion,
            kind: owner.kind,
            name: owner.metadata.name ?? "",
            uid: owner.metadata.uid ?? "",
            controller: true,
          },
        ],
      },
      data: { blob: "x".repeat(1024 * 1024) },
    });
  }
}

describe("reconcile with spec.chart, against the informer cache", () => {
  test("a tenant's children of an instance whose chart never renders are identities, untouched", async () => {
    // GIVEN instance holder, whose chart never renders, and 5 ConfigMaps of 1 MB labelled as its chart's and
    // controlled by it; and instance web, whose chart renders a Deployment and a ConfigMap
    const { h, cache, cached } = setup();
    const holder = h.cluster.createInstance("holder", { image: "nginx:1.27", chart: { configMap: "no-such-chart" } });
    forge(h.cluster, holder, 5);
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "web-chart" } });

    // WHEN both reconcile, and the watch delivers every object
    await assert.rejects(h.run("holder"), TransientError);
    await h.run("web");
    await cache.deliver();

    // THEN the cache keeps of each forged ConfigMap its identity only, not its megabyte
    for (let n = 0; n < 5; n += 1) {
      const forged = await cached("v1", "ConfigMap", `forged-${n}`);
      assert.ok(forged && isContentWithheld(forged));
      assert.equal(forged["data"], undefined);
      assert.ok(JSON.stringify(forged).length < 1_000);
    }
    // ... and what web's chart applied whole: its ConfigMap's data, its Deployment's spec
    assert.deepEqual((await cached("v1", "ConfigMap", "web-config"))?.["data"], { a: "1" });
    assert.ok((await cached("apps/v1", "Deployment", "web-app"))?.["spec"]);
    // ... and nothing of the tenant's was written or deleted
    assert.deepEqual(
      h.cluster.writeLines().filter((line) => line.includes("forged")),
      [],
    );
    for (let n = 0; n < 5; n += 1) assert.ok(h.cluster.get("v1", "ConfigMap", `forged-${n}`));

    // WHEN web's Deployment rolls out and web is looked at again THEN it reads nothing live and writes nothing
    h.cluster.rollOut("Deployment", "web-app");
    await cache.deliver();
    await h.run("web");
    h.cluster.reset();
    await h.run("web");
    assert.deepEqual(h.cluster.allWrites(), []);
    assert.deepEqual(h.cluster.liveReadLines, []);
    assert.equal(h.cluster.instance("web")?.status?.phase, "Running");
  });

  test("after a restart, reads each rendered object live once, then nothing; a hand edit is put back", async () => {
    // GIVEN web, converged
    const { h, cache, cached } = setup();
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "web-chart" } });
    await h.run("web");
    h.cluster.rollOut("Deployment", "web-app");
    await h.run("web");

    // WHEN the operator restarts: its first list comes before any render, so the cache keeps identities
    const rendered = new RenderedChildren();
    (h.deps.chart as { renderedChildren: RenderedChildren }).renderedChildren = rendered;
    await cache.restart(rendered);
    assert.ok(isContentWithheld((await cached("v1", "ConfigMap", "web-config")) ?? { metadata: {} }));
    h.cluster.reset();
    await h.run("web");

    // THEN its render reads the two objects live once, writes nothing, and is still Ready
    assert.deepEqual(h.cluster.liveReadLines.toSorted(), ["find ConfigMap/web-config", "find Deployment/web-app"]);
    assert.deepEqual(h.cluster.allWrites(), []);
    assert.equal(h.cluster.instance("web")?.status?.phase, "Running");
    // ... and the next looks read nothing live (the copies stand while the cache has nothing newer)
    h.cluster.reset();
    await h.run("web");
    assert.deepEqual(h.cluster.liveReadLines, []);
    assert.deepEqual(h.cluster.allWrites(), []);

    // WHEN its ConfigMap is edited by hand (the watch delivers the edit, now kept whole)
    h.cluster.edit("v1", "ConfigMap", "web-config", (o) => void (o["data"] = { a: "edited" }));
    await cache.deliver();
    h.cluster.reset();
    await h.run("web");
    // THEN the render is applied over it again, without a live read
    assert.deepEqual(h.cluster.writeLines(), ["apply ConfigMap/web-config"]);
    assert.deepEqual(h.cluster.get("v1", "ConfigMap", "web-config")?.["data"], { a: "1" });
    assert.deepEqual(h.cluster.liveReadLines, []);
  });

  test("a rendered object someone grew past what the render sets is read live when the chart needs it", async () => {
    // GIVEN web, converged
    const { h, cache, cached } = setup();
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "web-chart" } });
    await h.run("web");
    h.cluster.rollOut("Deployment", "web-app");
    await h.run("web");

    // WHEN the tenant adds a megabyte to its ConfigMap, beside what the chart set
    h.cluster.edit("v1", "ConfigMap", "web-config", (o) => void (o["data"] = { a: "1", blob: "x".repeat(1 << 20) }));
    await cache.deliver();

    // THEN the cache keeps its identity only, and each look reads it live and writes nothing (the chart's fields
    // are as it set them); the megabyte is not kept between looks
    assert.equal((await cached("v1", "ConfigMap", "web-config"))?.["data"], undefined);
    for (let look = 0; look < 2; look += 1) {
      h.cluster.reset();
      await h.run("web");
      assert.deepEqual(h.cluster.liveReadLines, ["find ConfigMap/web-config"]);
      assert.deepEqual(h.cluster.allWrites(), []);
    }
  });
});
