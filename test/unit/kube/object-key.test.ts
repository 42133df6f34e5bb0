/** kube/object-key.ts: the one `namespace/name` key of the operator runtime, the reconciler, the provider and the tools. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatObjectKey, parseObjectKey } from "../../../kube/object-key.ts";

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
