import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../kube/index.ts";
import { InformerCache, keptWriteMs } from "../../../operator/runtime/cache.ts";
import { Informer } from "../../../operator/runtime/informer.ts";
import { captureLogger } from "./capture-logger.ts";
import { FakeClock, settle } from "./fake-clock.ts";
import { FakeListWatch, listOf } from "./fake-list-watch.ts";

function object(name: string, resourceVersion: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace: "ns", resourceVersion, labels } };
}

async function synced(...items: KubeObject[]) {
  return syncedWith({}, ...items);
}

async function syncedWith(
  options: {
    indexedLabels?: readonly string[];
    clock?: FakeClock;
    transform?: (object: KubeObject) => KubeObject;
  },
  ...items: KubeObject[]
) {
  const api = new FakeListWatch();
  api.lists.push(listOf("100", ...items));
  const informer = new Informer({
    client: api.client,
    apiVersion: "apps/v1",
    kind: "Deployment",
    namespace: "ns",
    logger: captureLogger().logger,
    ...(options.indexedLabels ? { indexedLabels: options.indexedLabels } : {}),
    ...(options.transform ? { transform: options.transform } : {}),
  });
  const cache = new InformerCache([informer], options.clock);
  assert.equal(cache.covers("apps/v1", "Deployment", "ns"), false, "not before the first list");
  informer.start();
  await informer.waitForSync();
  await settle();
  return { api, informer, cache };
}

describe("InformerCache", () => {
  it("stores again what its transform keeps of one label's objects when that changed, own writes included", async () => {
    // GIVEN a transform that keeps whole the objects of instances it is told to, else only their names
    const whole = new Set(["big"]);
    const transform = (o: KubeObject): KubeObject =>
      whole.has(o.metadata.labels?.["instance"] ?? "") ? o : { ...o, metadata: { ...o.metadata, annotations: {} } };
    const annotated = (name: string, rv: string, instance: string): KubeObject => ({
      ...object(name, rv, { instance }),
      metadata: { ...object(name, rv, { instance }).metadata, annotations: { pad: "x".repeat(1000) } },
    });
    const { informer, cache } = await syncedWith(
      { indexedLabels: ["instance"], transform },
      annotated("a", "90", "big"),
      annotated("b", "91", "other"),
    );
    cache.wrote(annotated("c", "95", "big"));
    const padOf = (name: string) => cache.get("apps/v1", "Deployment", name, "ns")?.metadata.annotations?.["pad"];
    assert.equal(padOf("a")?.length, 1000);
    assert.equal(padOf("c")?.length, 1000, "an own write, kept as the informer keeps it");
    // WHEN the transform no longer keeps instance big's objects whole, and the cache is told so
    whole.delete("big");
    cache.transformAgain("ns", "instance", "big");
    // THEN they are kept as it now says, without any watch event
    assert.equal(padOf("a"), undefined);
    assert.equal(padOf("c"), undefined);
    assert.equal(padOf("b"), undefined, "never kept whole");
    assert.equal(cache.get("apps/v1", "Deployment", "a", "ns")?.metadata.resourceVersion, "90", "the same object");
    await informer.stop();
  });

  it("covers the kinds and namespaces its informers watch once synced", async () => {
    const { informer, cache } = await synced(object("a", "90"));
    assert.equal(cache.covers("apps/v1", "Deployment", "ns"), true);
    assert.equal(cache.covers("apps/v1", "Deployment", "other"), false);
    assert.equal(cache.covers("v1", "Service", "ns"), false);
    assert.equal(cache.get("apps/v1", "Deployment", "a", "ns")?.metadata.resourceVersion, "90");
    assert.equal(cache.get("apps/v1", "Deployment", "b", "ns"), undefined);
    await informer.stop();
  });

  it("lists by equality label selector", async () => {
    const { informer, cache } = await synced(object("a", "90", { app: "x" }), object("b", "91", { app: "y" }));
    assert.deepEqual(
      cache.list("apps/v1", "Deployment", "ns", "app=x").map((o) => o.metadata.name),
      ["a"],
    );
    assert.throws(() => cache.list("apps/v1", "Deployment", "ns", "app in (x)"), /only equality/);
    await informer.stop();
  });

  it("lists through an indexed label the same objects a scan finds, own writes included", async () => {
    const items = [
      object("a", "90", { app: "x", tier: "web" }),
      object("b", "91", { app: "x", tier: "db" }),
      object("c", "92", { app: "y", tier: "web" }),
    ];
    const scanning = await synced(...items);
    const indexed = await syncedWith({ indexedLabels: ["app"] }, ...items);
    for (const { cache } of [scanning, indexed]) cache.wrote(object("b", "95", { app: "x", tier: "db" }));
    for (const selector of ["app=x", "app=x,tier=web", "tier=web", "app=z", ""]) {
      const names = (cache: InformerCache) =>
        cache
          .list("apps/v1", "Deployment", "ns", selector)
          .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`);
      assert.deepEqual(names(indexed.cache).sort(), names(scanning.cache).sort(), selector);
    }
    assert.deepEqual(
      indexed.cache
        .list("apps/v1", "Deployment", "ns", "app=x")
        .map((o) => o.metadata.resourceVersion)
        .sort(),
      ["90", "95"],
    );
    await Promise.all([scanning.informer.stop(), indexed.informer.stop()]);
  });

  it("serves the process's own write until the watch has delivered it or something newer", async () => {
    const { api, informer, cache } = await synced(object("a", "90"));
    cache.wrote({ ...object("a", "120"), metadata: { ...object("a", "120").metadata, managedFields: [{}] } });
    const own = cache.get("apps/v1", "Deployment", "a", "ns");
    assert.equal(own?.metadata.resourceVersion, "120");
    assert.equal(own?.metadata.managedFields, undefined, "stored stripped");
    api.lastWatch!.send("MODIFIED", object("a", "130"));
    await settle();
    assert.equal(cache.get("apps/v1", "Deployment", "a", "ns")?.metadata.resourceVersion, "130");
    // a deletion the watch delivers wins over an own write not yet seen
    cache.wrote(object("a", "140"));
    api.lastWatch!.send("DELETED", object("a", "135"));
    await settle();
    assert.equal(cache.get("apps/v1", "Deployment", "a", "ns"), undefined);
    await informer.stop();
  });

  it("keeps the answer that deleted an object only until the store no longer has it, its deletion seen first", async () => {
    // GIVEN an object being deleted, held by one finalizer
    const terminating = (resourceVersion: string, finalizers: string[]) => ({
      ...object("a", resourceVersion),
      metadata: { ...object("a", resourceVersion).metadata, deletionTimestamp: "2030-01-01T00:00:00Z", finalizers },
    });
    const { api, informer, cache } = await synced(terminating("90", ["example.com/cleanup"]));
    // WHEN the watch delivers its deletion before the answer to the patch that removed the finalizer arrives
    api.lastWatch!.send("DELETED", terminating("91", []));
    await settle();
    cache.wrote(terminating("91", []));
    // THEN the object is gone, and nothing of it is kept
    assert.equal(cache.get("apps/v1", "Deployment", "a", "ns"), undefined);
    assert.equal(cache.keptWrites, 0);
    await informer.stop();
  });

  it("keeps no write longer than the watch could take to deliver it", async () => {
    // GIVEN a write the watch never delivers (its object was deleted while the watch was away)
    const clock = new FakeClock();
    const { informer, cache } = await syncedWith({ clock }, object("a", "90"));
    cache.wrote(object("a", "120"));
    cache.wrote(object("phantom", "121"));
    assert.equal(cache.get("apps/v1", "Deployment", "a", "ns")?.metadata.resourceVersion, "120");
    // WHEN longer than that has passed
    await clock.advance(keptWriteMs + 1);
    // THEN reads see what the watch has, and the next write takes the old ones away
    assert.equal(cache.get("apps/v1", "Deployment", "a", "ns")?.metadata.resourceVersion, "90");
    cache.wrote(object("b", "130"));
    assert.equal(cache.keptWrites, 1, "only the new write is kept");
    assert.equal(cache.get("apps/v1", "Deployment", "phantom", "ns"), undefined);
    await informer.stop();
  });
});
