import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { childLabels, labelValue, selectorLabels, selectorString } from "../../../operator/desired/index.ts";
import { labels, selector } from "./fixtures.ts";

describe("labels", () => {
  it("puts the recommended app.kubernetes.io labels on children", () => {
    assert.deepEqual(childLabels("web"), labels);
  });

  it("selects by name and instance only, a subset of the child labels that never changes", () => {
    assert.deepEqual(selectorLabels("web"), selector);
    for (const [key, value] of Object.entries(selectorLabels("web"))) assert.equal(childLabels("web")[key], value);
  });

  it("writes the selector as a sorted string for status.selector", () => {
    assert.equal(selectorString("web"), "app.kubernetes.io/instance=web,app.kubernetes.io/name=myapp");
  });

  it("uses a bounded label value for a long instance name", () => {
    const long = "n".repeat(100);
    assert.equal(selectorLabels(long)["app.kubernetes.io/instance"], labelValue(long));
    assert.ok(labelValue(long).length <= 63);
  });
});
