import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { controllerReference, heldElsewhere, isControlledBy } from "../../../operator/desired/index.ts";

const instance = { name: "web", namespace: "shop", uid: "u1" };

describe("heldElsewhere", () => {
  it("is undefined for an object the instance controls", () => {
    const references = [controllerReference(instance)];
    assert.ok(isControlledBy(references, "u1"));
    assert.equal(heldElsewhere(references, "u1"), undefined);
  });

  it("names another controller", () => {
    const references = [{ apiVersion: "apps/v1", kind: "Deployment", name: "other", uid: "u2", controller: true }];
    assert.equal(heldElsewhere(references, "u1"), "controlled by Deployment other");
  });

  it("holds an object with no controller (none, or owners that do not control it) for someone else's too", () => {
    assert.equal(heldElsewhere(undefined, "u1"), "not the instance's (it has no controller)");
    assert.equal(heldElsewhere([], "u1"), "not the instance's (it has no controller)");
    // The instance as a mere owner is no controller reference: an apply would add one.
    const notControlling = [{ ...controllerReference(instance), controller: false }];
    assert.equal(heldElsewhere(notControlling, "u1"), "not the instance's (it has no controller)");
  });
});
