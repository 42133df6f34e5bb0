import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { byCodeUnits } from "../../../api/code-unit-order.ts";

describe("byCodeUnits", () => {
  it("orders as Go's sort.Strings: upper case before lower, punctuation by its code", () => {
    const keys = ["b", "app_x", "B", "app.kubernetes.io/name", "app-x", "app"];
    assert.deepEqual(keys.sort(byCodeUnits), ["B", "app", "app-x", "app.kubernetes.io/name", "app_x", "b"]);
  });

  it("is a total order: equal strings compare 0, and swapping the arguments flips the sign", () => {
    assert.equal(byCodeUnits("a", "a"), 0);
    assert.equal(byCodeUnits("a", "b"), -1);
    assert.equal(byCodeUnits("b", "a"), 1);
  });
});
