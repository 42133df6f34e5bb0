/**
 * The chaos suite's fuzzed specs (test/chaos/fuzz-manifests.ts), checked without a cluster: a seed always gives
 * the same cases, and zod judges each as the generator meant it (valid, or invalid naming every broken field), so
 * a disagreement in the chaos run is one between the layers, never a mistake of the generator.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiVersion, kind, validateInstance } from "../../../api/index.ts";
import { fuzzCases } from "../../chaos/fuzz-manifests.ts";
import { namesField } from "../../fixtures/instances/corpus.ts";

test("a seed gives the same fuzzed specs every time, and another seed others", () => {
  assert.deepEqual(fuzzCases(13, 50), fuzzCases(13, 50));
  assert.notDeepEqual(fuzzCases(13, 50), fuzzCases(14, 50));
});

test("zod judges 500 fuzzed specs as the generator meant them", () => {
  const cases = fuzzCases(13, 500);
  const wrong = cases.flatMap((c) => {
    const verdict = validateInstance({ apiVersion, kind, metadata: { name: c.name, namespace: "ns" }, spec: c.spec });
    const paths = verdict.ok ? [] : verdict.issues.map((issue) => issue.path);
    if (verdict.ok !== (c.broken.length === 0)) return [`${c.name} ${JSON.stringify(c.spec)}: ${paths.join(", ")}`];
    return c.broken.filter((field) => !namesField(paths, field)).map((field) => `${c.name}: ${field} not named`);
  });
  assert.deepEqual(wrong, []);
  const valid = cases.filter((c) => c.broken.length === 0).length;
  assert.ok(valid > 150 && valid < 350, `about half valid: ${valid}`);
  assert.ok(new Set(cases.flatMap((c) => c.broken)).size >= 8, "every field gets broken somewhere");
});
