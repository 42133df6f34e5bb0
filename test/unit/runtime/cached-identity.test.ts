import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../kube/index.ts";
import { contentIfControlled, identityOnly } from "../../../operator/runtime/cached-identity.ts";

const owner = { apiVersion: "example.com/v1", kind: "MyAppInstance" };
const controller = { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "web", uid: "u1", controller: true };

/** A ConfigMap as a tenant may write it: our label, a megabyte of data, labels and annotations of their own. */
const forged = (ownerReferences?: KubeObject["metadata"]["ownerReferences"]): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: "cm",
    namespace: "team",
    uid: "u2",
    resourceVersion: "7",
    generation: 1,
    labels: {
      "app.kubernetes.io/managed-by": "myapp-operator",
      ...Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`extra-${i}`, "x".repeat(63)])),
    },
    annotations: { big: "x".repeat(200_000) },
    finalizers: ["team/keep"],
    managedFields: [{ manager: "kubectl" }],
    ...(ownerReferences ? { ownerReferences } : {}),
  },
  data: { blob: "x".repeat(1024 * 1024) },
});

describe("identityOnly", () => {
  it("keeps who the object is and whose, and the labels asked for; nothing else", () => {
    const object = forged([
      { apiVersion: "v1", kind: "ConfigMap", name: "other", uid: "u3" },
      { apiVersion: "apps/v1", kind: "Deployment", name: "d".repeat(100_000), uid: "u4", controller: true },
    ]);
    const kept = identityOnly(
      { ...object, metadata: { ...object.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } },
      ["app.kubernetes.io/managed-by", "app.kubernetes.io/instance"],
    );
    assert.deepEqual(kept, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "cm",
        namespace: "team",
        uid: "u2",
        resourceVersion: "7",
        deletionTimestamp: "2026-01-01T00:00:00Z",
        labels: { "app.kubernetes.io/managed-by": "myapp-operator" },
        // The controller only, its name cut to the longest a valid name can be.
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "Deployment", name: "d".repeat(253), uid: "u4", controller: true },
        ],
      },
    });
    assert.ok(JSON.stringify(kept).length < 1_000, "a few hundred bytes, whatever the object weighs");
  });

  it("sets no labels or owner references the object does not have", () => {
    const bare: KubeObject = { apiVersion: "v1", kind: "Service", metadata: { name: "s", namespace: "n" }, spec: {} };
    assert.deepEqual(identityOnly(bare, ["app.kubernetes.io/managed-by"]), {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "s", namespace: "n" },
    });
  });
});

describe("contentIfControlled", () => {
  // The owner keeps in sync only what it names "cm-<owner>" (a template child, say).
  const transform = contentIfControlled(
    owner,
    ["app.kubernetes.io/managed-by"],
    (object, reference) => object.metadata.name === `cm-${reference.name}`,
  );
  const named = (object: KubeObject, name: string): KubeObject => ({
    ...object,
    metadata: { ...object.metadata, name },
  });

  it("keeps an object an owner controls and keeps in sync whole, without managedFields", () => {
    const ours = named(forged([controller]), "cm-web");
    const kept = transform(ours);
    assert.equal((kept["data"] as { blob: string }).blob.length, 1024 * 1024);
    assert.equal(kept.metadata.annotations?.["big"]?.length, 200_000);
    assert.equal(kept.metadata.managedFields, undefined);
  });

  it("keeps only the identity of an object no owner controls, or one it does not keep in sync", () => {
    for (const references of [undefined, [{ ...controller, controller: false }], [{ ...controller, kind: "Other" }]]) {
      const kept = transform(named(forged(references), "cm-web"));
      assert.equal(kept["data"], undefined);
      assert.equal(kept.metadata.annotations, undefined);
      assert.deepEqual(kept.metadata.labels, { "app.kubernetes.io/managed-by": "myapp-operator" });
    }
    // A tenant's own object naming the tenant's instance as its controller, uid and all: still only its identity.
    for (const name of ["cm", "cm-other"]) {
      const kept = transform(named(forged([controller]), name));
      assert.equal(kept["data"], undefined);
      assert.equal(kept.metadata.annotations, undefined);
      assert.deepEqual(kept.metadata.labels, { "app.kubernetes.io/managed-by": "myapp-operator" });
    }
  });
});
