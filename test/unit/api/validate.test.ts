import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatFieldIssues, openApiV3Schema, validateInstance, validateSpec } from "../../../api/index.ts";
import { containsNull, pruneNulls, pruneObjectNulls } from "../../../api/null-pruning.ts";
import { fieldPath } from "../../../api/validate.ts";

const object = (metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: "example.com/v1",
  kind: "MyAppInstance",
  metadata,
  spec: { image: "nginx" },
  ...extra,
});

const paths = (input: unknown): string[] => {
  const verdict = validateInstance(input);
  return verdict.ok ? [] : verdict.issues.map((issue) => issue.path);
};

describe("validateInstance", () => {
  test("accepts a minimal object and applies the spec defaults", () => {
    const verdict = validateInstance(object({ name: "web" }));
    assert.ok(verdict.ok);
    assert.deepEqual(verdict.instance.spec, {
      image: "nginx",
      replicas: 1,
      port: 8080,
      storageReclaimPolicy: "Retain",
    });
  });

  test("checks metadata as the apiserver does on create", () => {
    assert.deepEqual(paths(object({})), ["metadata.name"]);
    assert.deepEqual(paths(object({ name: "" })), ["metadata.name"]);
    assert.deepEqual(paths(object({ generateName: "web-" })), []);
    assert.deepEqual(paths(object({ generateName: "Web_" })), ["metadata.generateName"]);
    assert.deepEqual(paths(object({ name: "Web" })), ["metadata.name"]);
    assert.deepEqual(paths(object({ name: "a".repeat(254) })), ["metadata.name"]);
    assert.deepEqual(paths(object({ name: "web", namespace: "Team A" })), ["metadata.namespace"]);
    assert.deepEqual(paths(object({ name: "web", labels: { "bad key": "x" } })), ["metadata.labels.bad key"]);
    assert.deepEqual(paths(object({ name: "web", labels: { app: "a".repeat(64) } })), ["metadata.labels.app"]);
    assert.deepEqual(paths(object({ name: "web", annotations: { "Example.com/Note": "ok" } })), []);
    assert.deepEqual(paths(object({ name: "web", annotations: { note: "x".repeat(256 * 1024) } })), [
      "metadata.annotations",
    ]);
    assert.deepEqual(paths(object({ name: "web", finalizers: ["not a finalizer"] })), ["metadata.finalizers[0]"]);
    assert.deepEqual(paths(object({ name: "web", lables: {} })), ["metadata.lables"]);
  });

  test("reads null metadata fields as unset, as ObjectMeta decoding does", () => {
    assert.deepEqual(paths(object({ name: "web", creationTimestamp: null, labels: null })), []);
  });

  test("requires spec and rejects unknown top-level fields", () => {
    assert.deepEqual(paths({ ...object({ name: "web" }), spec: undefined }), ["spec"]);
    assert.deepEqual(paths(object({ name: "web" }, { extra: 1 })), ["extra"]);
  });

  test("names fields inside lists with brackets", () => {
    const status = {
      conditions: [
        { type: "Ready", status: "True", lastTransitionTime: "2025-04-01T12:00:00Z", reason: "R", message: "", x: 1 },
      ],
    };
    assert.deepEqual(paths(object({ name: "web" }, { status })), ["status.conditions[0].x"]);
  });
});

describe("pruneNulls", () => {
  const schema = openApiV3Schema();

  test("drops declared, non-nullable nulls; keeps unknown ones and list items", () => {
    // GIVEN nulls in known fields, in an unknown field, and in a list
    const input = {
      spec: { image: null, replicas: null, unknown: null },
      status: { conditions: [null], phase: null },
    };
    // WHEN pruned THEN only the declared fields' nulls are gone
    assert.deepEqual(pruneNulls(input, schema), { spec: { unknown: null }, status: { conditions: [null] } });
  });

  test("keeps keys named __proto__ or constructor as data: never a prototype, never a declared field", () => {
    // GIVEN JSON as the apiserver sends it: an own __proto__ in free-form values, a null unknown field `constructor`
    const input = JSON.parse('{"spec":{"image":"nginx","constructor":null,"values":{"__proto__":{"a":null}}}}');
    // WHEN pruned
    const pruned = pruneNulls(input, schema) as { spec: { values: object } };
    // THEN __proto__ is still an own key of a plain object, and `constructor` (not declared) keeps its null
    assert.equal(Object.getPrototypeOf(pruned.spec.values), Object.prototype);
    assert.deepEqual(Object.keys(pruned.spec.values), ["__proto__"]);
    assert.ok(Object.hasOwn(pruned.spec, "constructor"));
  });

  test("containsNull finds a null at any depth, in objects and lists, and only there", () => {
    assert.equal(containsNull({ spec: { image: "nginx", resources: { limits: { cpu: "1" } }, ports: [1] } }), false);
    assert.equal(containsNull({ spec: { resources: { limits: { cpu: null } } } }), true);
    assert.equal(containsNull({ spec: { values: { list: [{ a: 1 }, null] } } }), true);
    assert.equal(containsNull(null), true);
    assert.equal(containsNull(undefined), false);
  });

  test("a null deep in a spec is still dropped before validation (the schema is generated when one is there)", () => {
    const verdict = validateSpec({ image: "nginx", resources: { limits: null } });
    assert.ok(verdict.ok, JSON.stringify(verdict));
  });

  test("values nested past the stack cost no recursion: found, pruned and refused by their depth", () => {
    // GIVEN values 9,000 levels deep (the apiserver stores up to ~10,000; JSON.stringify overflows at a few thousand)
    const deep = (depth: number, leaf: string) => JSON.parse('{"a":'.repeat(depth) + leaf + "}".repeat(depth));
    // THEN a null at the bottom is found, nothing below the schema is copied, and the spec is refused by its depth
    assert.equal(containsNull(deep(9000, "null")), true);
    assert.equal(containsNull(deep(9000, "1")), false);
    const values = deep(9000, "null");
    const pruned = pruneNulls({ spec: { image: "nginx", values } }, schema) as { spec: { values: { a: unknown } } };
    assert.equal(pruned.spec.values.a, values.a);
    assert.deepEqual(validateSpec({ image: "nginx", values }), {
      ok: false,
      issues: [{ path: "spec.values", message: "must nest objects and arrays at most 100 levels deep" }],
    });
    // 100 levels, the values object being the first, pass; 101 do not.
    assert.ok(validateSpec({ image: "nginx", values: deep(99, "[]") }).ok);
    assert.equal(validateSpec({ image: "nginx", values: deep(100, "[]") }).ok, false);
    assert.ok(validateSpec({ image: "nginx", values: deep(100, "1") }).ok);
  });

  test("does not change its input", () => {
    const input = { spec: { image: null } };
    pruneObjectNulls(input, schema);
    assert.deepEqual(input, { spec: { image: null } });
  });
});

test("fieldPath and formatFieldIssues print paths as the apiserver does", () => {
  assert.equal(fieldPath(["status", "conditions", 0, "type"]), "status.conditions[0].type");
  assert.equal(
    formatFieldIssues([
      { path: "spec.port", message: "must be an integer from 1 to 65535" },
      { path: "spec.image", message: "is required" },
    ]),
    "spec.port: must be an integer from 1 to 65535\nspec.image: is required",
  );
});
