import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject, OwnerReference } from "../../../kube/client.ts";
import { enqueueObject, enqueueOwner, specOrMetadataChanged } from "../../../operator/runtime/event-handlers.ts";
import { controllerOwnerKey } from "../../../operator/runtime/owner-mapping.ts";
import { formatObjectKey } from "../../../kube/object-key.ts";

const myApp = { apiVersion: "example.com/v1", kind: "MyAppInstance" };

function owned(name: string, ...ownerReferences: OwnerReference[]): KubeObject {
  return { apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace: "shop", ownerReferences } };
}

function ref(name: string, extra: Partial<OwnerReference> = {}): OwnerReference {
  return { apiVersion: "example.com/v1", kind: "MyAppInstance", name, uid: `uid-${name}`, controller: true, ...extra };
}

describe("controllerOwnerKey", () => {
  it("maps an owned object to its controlling MyAppInstance in the same namespace", () => {
    assert.deepEqual(controllerOwnerKey(owned("web", ref("web")), myApp), { namespace: "shop", name: "web" });
  });

  it("ignores owners that are not the controller, or of another kind or group", () => {
    assert.equal(controllerOwnerKey(owned("x", ref("a", { controller: false })), myApp), undefined);
    assert.equal(controllerOwnerKey(owned("x", ref("a", { controller: undefined })), myApp), undefined);
    assert.equal(
      controllerOwnerKey(owned("x", ref("a", { kind: "ReplicaSet", apiVersion: "apps/v1" })), myApp),
      undefined,
    );
    assert.equal(controllerOwnerKey(owned("x", ref("a", { apiVersion: "other.io/v1" })), myApp), undefined);
    assert.equal(controllerOwnerKey(owned("x"), myApp), undefined);
  });

  it("matches any version of the owner's group", () => {
    assert.deepEqual(controllerOwnerKey(owned("x", ref("a", { apiVersion: "example.com/v2" })), myApp), {
      namespace: "shop",
      name: "a",
    });
  });

  it("picks the controller among several owners", () => {
    const object = owned("x", ref("a", { controller: false }), ref("b"));
    assert.deepEqual(controllerOwnerKey(object, myApp), { namespace: "shop", name: "b" });
  });
});

describe("enqueueOwner", () => {
  it("enqueues the owner on add, update and delete", () => {
    const keys: string[] = [];
    const handlers = enqueueOwner(myApp, (key) => keys.push(formatObjectKey(key)));
    handlers.onAdd?.(owned("d", ref("web")), false);
    handlers.onUpdate?.(owned("d", ref("web")), owned("d", ref("web")));
    handlers.onDelete?.(owned("d", ref("web")));
    handlers.onAdd?.(owned("unowned"), false);
    assert.deepEqual(keys, ["shop/web", "shop/web", "shop/web"]);
  });

  it("enqueues a first list's objects at low priority, every change at normal", () => {
    const keys: string[] = [];
    const handlers = enqueueOwner(myApp, (key, priority) => keys.push(`${formatObjectKey(key)} ${priority}`));
    handlers.onAdd?.(owned("d", ref("web")), true);
    handlers.onAdd?.(owned("d", ref("web")), false);
    handlers.onUpdate?.(owned("d", ref("web")), owned("d", ref("web")));
    handlers.onDelete?.(owned("d", ref("web")));
    assert.deepEqual(keys, ["shop/web low", "shop/web normal", "shop/web normal", "shop/web normal"]);
  });

  it("enqueues both owners when an object changes hands", () => {
    const keys: string[] = [];
    enqueueOwner(myApp, (key) => keys.push(formatObjectKey(key))).onUpdate?.(
      owned("d", ref("old")),
      owned("d", ref("new")),
    );
    assert.deepEqual(keys, ["shop/old", "shop/new"]);
  });

  it("enqueues the old owner when an object loses it", () => {
    const keys: string[] = [];
    enqueueOwner(myApp, (key) => keys.push(formatObjectKey(key))).onUpdate?.(owned("d", ref("old")), owned("d"));
    assert.deepEqual(keys, ["shop/old"]);
  });
});

describe("enqueueObject / specOrMetadataChanged", () => {
  const base: KubeObject = {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: { name: "web", namespace: "shop", generation: 1, resourceVersion: "1", finalizers: ["f"] },
    status: { phase: "Pending" },
  };

  it("skips the operator's own status-only writes but not spec or metadata changes", () => {
    const statusOnly = { ...base, metadata: { ...base.metadata, resourceVersion: "2" }, status: { phase: "Running" } };
    assert.equal(specOrMetadataChanged(base, statusOnly), false);
    assert.equal(specOrMetadataChanged(base, { ...base, metadata: { ...base.metadata, generation: 2 } }), true);
    assert.equal(specOrMetadataChanged(base, { ...base, metadata: { ...base.metadata, finalizers: [] } }), true);
    assert.equal(
      specOrMetadataChanged(base, {
        ...base,
        metadata: { ...base.metadata, deletionTimestamp: "2030-01-01T00:00:00Z" },
      }),
      true,
    );
    assert.equal(specOrMetadataChanged(base, { ...base, metadata: { ...base.metadata, labels: { a: "b" } } }), true);
  });

  it("enqueues the object's own key, filtering updates through the predicate", () => {
    const keys: string[] = [];
    const handlers = enqueueObject<KubeObject>((key) => keys.push(formatObjectKey(key)), specOrMetadataChanged);
    handlers.onAdd?.(base, false);
    handlers.onUpdate?.(base, { ...base, status: { phase: "Running" } });
    handlers.onUpdate?.(base, { ...base, metadata: { ...base.metadata, generation: 2 } });
    handlers.onDelete?.(base);
    assert.deepEqual(keys, ["shop/web", "shop/web", "shop/web"]);
  });
});
