/** kube/object-key.ts: the one `namespace/name` key of the operator runtime, the reconciler, the provider and the tools. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatObjectKey, objectKeyOf, parseObjectKey, sameObjectKey } from "../../../kube/object-key.ts";

describe("object keys", () => {
  it("round-trips namespaced and cluster-scoped keys", () => {
    assert.equal(formatObjectKey({ namespace: "shop", name: "web" }), "shop/web");
    assert.deepEqual(parseObjectKey("shop/web"), { namespace: "shop", name: "web" });
    // A cluster-scoped key has the namespace "", as Kubernetes' NamespacedName; formatting it gives the name alone.
    assert.equal(formatObjectKey({ name: "prod" }), "prod");
    assert.equal(formatObjectKey({ namespace: "", name: "prod" }), "prod");
    assert.deepEqual(parseObjectKey("prod", { clusterScoped: true }), { namespace: "", name: "prod" });
    for (const key of ["shop/web", "prod"]) {
      assert.equal(formatObjectKey(parseObjectKey(key, { clusterScoped: true })), key);
    }
  });

  it("rejects malformed keys with the expected format in the message", () => {
    assert.throws(() => parseObjectKey("a/b/c"), /expected "namespace\/name"/);
    assert.throws(() => parseObjectKey("/b"), /invalid object key/);
    assert.throws(() => formatObjectKey({ namespace: "x" }), /metadata.name/);
  });

  it("formats no key that would read back as another", () => {
    // "a/b" + "c" and "a" + "b/c" would both be "a/b/c"; a cluster-scoped "a/b" would read back as namespace "a".
    assert.throws(() => formatObjectKey({ namespace: "a", name: "b/c" }), /metadata.name "b\/c" holds a "\/"/);
    assert.throws(() => formatObjectKey({ namespace: "a/b", name: "c" }), /metadata.namespace "a\/b" holds a "\/"/);
    assert.throws(() => formatObjectKey({ name: "a/b" }), /metadata.name "a\/b"/);
    assert.throws(() => objectKeyOf({ namespace: "a", name: "b/c" }), /metadata.name "b\/c" holds a "\/"/);
  });

  it('keys an object by its metadata, namespace "" when it has none', () => {
    assert.deepEqual(objectKeyOf({ namespace: "shop", name: "web" }), { namespace: "shop", name: "web" });
    assert.deepEqual(objectKeyOf({ name: "prod" }), { namespace: "", name: "prod" });
    assert.throws(() => objectKeyOf({ namespace: "shop" }), /metadata.name/);
    assert.ok(sameObjectKey({ namespace: "shop", name: "web" }, objectKeyOf({ namespace: "shop", name: "web" })));
    assert.ok(!sameObjectKey({ namespace: "shop", name: "web" }, { namespace: "shop", name: "db" }));
    assert.ok(!sameObjectKey({ namespace: "shop", name: "web" }, { namespace: "blog", name: "web" }));
  });

  it("says what is wrong, naming the key as its caller calls it", () => {
    const cases: [string, RegExp][] = [
      ["", /invalid MyAppInstance id "": expected "namespace\/name", but it is empty$/],
      ["web", /but it has no "\/" between namespace and name$/],
      ["/web", /but the namespace is empty$/],
      ["shop/", /but the name is empty$/],
      ["a/b/c", /but it has more than one "\/"$/],
    ];
    for (const [text, message] of cases) {
      assert.throws(() => parseObjectKey(text, { what: "MyAppInstance id" }), message, text);
    }
  });

  it("takes a name alone only for a cluster-scoped key", () => {
    assert.throws(() => parseObjectKey("prod"), /invalid object key "prod": expected "namespace\/name", but/);
    assert.throws(
      () => parseObjectKey("a/b/c", { clusterScoped: true }),
      /expected "namespace\/name" or "name", but it has more than one "\/"/,
    );
  });
});
