import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { needsFinalizer } from "../../../operator/reconcile/finalize.ts";

describe("needsFinalizer: only where deleting the instance leaves work the garbage collector cannot do", () => {
  it("is false for the built-in template without storage: its Deployment and Services go with it", () => {
    assert.equal(needsFinalizer({ image: "nginx:1.27", replicas: 2 }, undefined), false);
  });

  it("is true with storage (the claims' reclaim policy is ours) or a chart (it may render anything)", () => {
    assert.equal(needsFinalizer({ image: "nginx:1.27", storage: "1Gi" }, undefined), true);
    assert.equal(needsFinalizer({ image: "nginx:1.27", storage: "" }, undefined), true, "any value counts");
    assert.equal(needsFinalizer({ image: "nginx:1.27", chart: { configMap: "c" } }, undefined), true);
  });

  it("is true for every instance of an operator with a default chart", () => {
    assert.equal(needsFinalizer({ image: "nginx:1.27" }, { configMap: "c" }), true);
  });

  it("is true for a spec it cannot read: when in doubt, the finalizer", () => {
    assert.equal(needsFinalizer(undefined, undefined), true);
    assert.equal(needsFinalizer("web", undefined), true);
  });
});
