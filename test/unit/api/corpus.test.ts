import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { validateInstance, validateStatus } from "../../../api/index.ts";
import { instanceCases, namesField, statusCases } from "../../fixtures/instances/corpus.ts";

// zod's half of the corpus proof (no cluster): each case gets the verdict its directory claims, naming the
// fields its `# expect:` lines list. test/integration/api-corpus.test.ts holds the apiserver to the same.

test("the corpus is big enough to mean something", () => {
  const cases = instanceCases();
  assert.ok(cases.length >= 40, `${cases.length} cases`);
  assert.ok(cases.filter((c) => c.valid).length >= 10);
  for (const c of cases) assert.equal(c.valid, c.expect.length === 0, `${c.name}: invalid cases name a field`);
});

describe("whole objects", () => {
  for (const corpusCase of instanceCases()) {
    test(corpusCase.name, () => {
      const verdict = validateInstance(corpusCase.document);
      const paths = verdict.ok ? [] : verdict.issues.map((issue) => issue.path);
      assert.equal(verdict.ok, corpusCase.valid, JSON.stringify(paths));
      for (const field of corpusCase.expect) assert.ok(namesField(paths, field), `${field} not in ${paths}`);
    });
  }
});

describe("statuses", () => {
  for (const corpusCase of statusCases()) {
    test(corpusCase.name, () => {
      const verdict = validateStatus(corpusCase.document);
      const paths = verdict.ok ? [] : verdict.issues.map((issue) => issue.path);
      assert.equal(verdict.ok, corpusCase.valid, JSON.stringify(paths));
      for (const field of corpusCase.expect) assert.ok(namesField(paths, field), `${field} not in ${paths}`);
    });
  }
});

test("namesField matches whole path segments only", () => {
  assert.ok(namesField(["spec.port"], "spec.port"));
  assert.ok(namesField(["metadata.labels.app"], "metadata.labels"));
  assert.ok(namesField(["status.conditions[0].type"], "status.conditions"));
  assert.equal(namesField(["spec.portName"], "spec.port"), false);
  assert.equal(namesField(["spec"], "spec.port"), false);
});
