/**
 * The mutating webhook's one default: `spec.podSecurityLevel` from the namespace's Pod Security label, only when
 * unset, and never a surprise change of a stored instance.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultsFor, namespaceDefaultLevel } from "../../../../operator/admission/mutate.ts";

const enforce = (level: string) => ({ "pod-security.kubernetes.io/enforce": level });
const baseline = [{ op: "add", path: "/spec/podSecurityLevel", value: "Baseline" }];

describe("defaultsFor", () => {
  it("baseline and privileged namespaces default an unset level to Baseline", () => {
    assert.deepEqual(defaultsFor({ spec: { image: "nginx" } }, enforce("baseline")), baseline);
    assert.deepEqual(defaultsFor({ spec: { image: "nginx" } }, enforce("privileged")), baseline);
  });

  it("restricted, unlabelled and unknown namespaces add nothing: unset already means Restricted", () => {
    assert.deepEqual(defaultsFor({ spec: { image: "nginx" } }, enforce("restricted")), []);
    assert.deepEqual(defaultsFor({ spec: { image: "nginx" } }, {}), []);
    assert.deepEqual(defaultsFor({ spec: { image: "nginx" } }, undefined), []);
    assert.deepEqual(defaultsFor({ spec: { image: "nginx" } }, { "pod-security.kubernetes.io/warn": "baseline" }), []);
    assert.equal(namespaceDefaultLevel(enforce("Baseline")), undefined);
  });

  it("a level the instance sets is never changed", () => {
    for (const level of ["Restricted", "Baseline"]) {
      assert.deepEqual(defaultsFor({ spec: { image: "nginx", podSecurityLevel: level } }, enforce("baseline")), []);
    }
  });

  it("an UPDATE re-adds the default only where the stored instance has it", () => {
    const unset = { spec: { image: "nginx:2" } };
    // A server-side apply of the same manifest drops the field the webhook set: it comes back.
    assert.deepEqual(defaultsFor(unset, enforce("baseline"), { spec: { podSecurityLevel: "Baseline" } }), baseline);
    // Stored without it (created before the webhook or the label): an unrelated change does not roll the pods.
    assert.deepEqual(defaultsFor(unset, enforce("baseline"), { spec: { image: "nginx" } }), []);
    // Stored Restricted by choice and now dropped: unset means Restricted, nothing to add.
    assert.deepEqual(defaultsFor(unset, enforce("baseline"), { spec: { podSecurityLevel: "Restricted" } }), []);
  });

  it("a spec that is not an object (mutation runs before the schema) is left alone", () => {
    for (const spec of [undefined, null, "x", [], 3]) {
      assert.deepEqual(defaultsFor({ spec }, enforce("baseline")), [], String(spec));
    }
  });
});
