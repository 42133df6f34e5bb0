import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../kube/client.ts";
import { ObjectStore } from "../../../operator/runtime/store.ts";

function obj(name: string, resourceVersion: string, namespace = "ns"): KubeObject {
  return { apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace, resourceVersion } };
}

describe("ObjectStore", () => {
  it("reports an upsert of a new key as add and of a known key as update", () => {
    const store = new ObjectStore();
    assert.deepEqual(store.upsert(obj("a", "1")), { type: "add", object: obj("a", "1") });
    assert.deepEqual(store.upsert(obj("a", "2")), { type: "update", oldObject: obj("a", "1"), object: obj("a", "2") });
    assert.equal(store.get("ns/a")?.metadata.resourceVersion, "2");
    assert.equal(store.size, 1);
  });

  it("reports the removal of a known object with its final state, and ignores unknown ones", () => {
    const store = new ObjectStore();
    store.upsert(obj("a", "1"));
    assert.deepEqual(store.remove(obj("a", "3")), { type: "delete", object: obj("a", "3") });
    assert.equal(store.remove(obj("a", "4")), undefined);
    assert.equal(store.size, 0);
  });

  it("turns a relist into the adds, updates and deletes that were missed", () => {
    // GIVEN a store that saw a, b and c
    const store = new ObjectStore();
    for (const o of [obj("a", "1"), obj("b", "1"), obj("c", "1")]) store.upsert(o);
    // WHEN a relist shows b changed, c gone and d new (a unchanged)
    const changes = store.replace([obj("a", "1"), obj("b", "5"), obj("d", "6")]);
    // THEN exactly those are reported, and the store equals the list
    assert.deepEqual(changes, [
      { type: "delete", object: obj("c", "1") },
      { type: "update", oldObject: obj("b", "1"), object: obj("b", "5") },
      { type: "add", object: obj("d", "6") },
    ]);
    assert.deepEqual([...store.keys()].sort(), ["ns/a", "ns/b", "ns/d"]);
  });

  it("keys cluster-scoped objects by name alone", () => {
    const store = new ObjectStore();
    store.upsert({ apiVersion: "v1", kind: "Namespace", metadata: { name: "prod", resourceVersion: "1" } });
    assert.deepEqual([...store.keys()], ["prod"]);
  });

  it("indexes chosen labels per namespace, and keeps the index right through updates, removals and relists", () => {
    const labelled = (name: string, rv: string, instance: string, namespace = "ns"): KubeObject => ({
      ...obj(name, rv, namespace),
      metadata: { ...obj(name, rv, namespace).metadata, labels: { instance, tier: "web" } },
    });
    const names = (objects: readonly KubeObject[]) => objects.map((o) => o.metadata.name).sort();
    const store = new ObjectStore({ indexedLabels: ["instance"] });
    store.upsert(labelled("a-svc", "1", "a"));
    store.upsert(labelled("a-web", "1", "a"));
    store.upsert(labelled("b-web", "1", "b"));
    store.upsert(labelled("a-web", "1", "a", "other"));
    assert.deepEqual(names(store.withLabel("ns", "instance", "a")), ["a-svc", "a-web"]);
    assert.deepEqual(names(store.withLabel("other", "instance", "a")), ["a-web"], "per namespace");
    assert.deepEqual(store.withLabel("ns", "instance", "c"), []);
    assert.equal(store.indexes("instance"), true);
    assert.equal(store.indexes("tier"), false);
    assert.throws(() => store.withLabel("ns", "tier", "web"), /tier is not indexed/);

    // a relabel moves the object, a removal drops it, a relist rebuilds the index from the list alone
    store.upsert(labelled("a-svc", "2", "b"));
    assert.deepEqual(names(store.withLabel("ns", "instance", "b")), ["a-svc", "b-web"]);
    store.remove(labelled("a-web", "3", "a"));
    assert.deepEqual(store.withLabel("ns", "instance", "a"), []);
    store.replace([labelled("c-web", "4", "c"), obj("plain", "4")]);
    assert.deepEqual(store.withLabel("ns", "instance", "b"), []);
    assert.deepEqual(names(store.withLabel("ns", "instance", "c")), ["c-web"]);
  });
});
