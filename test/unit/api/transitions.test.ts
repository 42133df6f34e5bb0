import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkSpecTransition, validateSpec } from "../../../api/index.ts";
import { namesField, transitionCases } from "../../fixtures/instances/corpus.ts";

describe("checkSpecTransition on the shared transition cases", () => {
  for (const transition of transitionCases()) {
    test(transition.name, () => {
      // Both sides are valid specs on their own: only the change is in question.
      assert.equal(validateSpec({ image: "nginx", ...transition.old }).ok, true);
      assert.equal(validateSpec({ image: "nginx", ...transition.new }).ok, true);
      const issues = checkSpecTransition(transition.old, transition.new);
      if (transition.expect === undefined) {
        assert.deepEqual(issues, []);
      } else {
        assert.ok(
          namesField(
            issues.map((issue) => issue.path),
            transition.expect,
          ),
          JSON.stringify(issues),
        );
      }
    });
  }
});

test("says what changed and what is allowed", () => {
  assert.deepEqual(checkSpecTransition({ storage: "2Gi" }, { storage: "1Gi" }), [
    { path: "spec.storage", message: "may grow but not shrink: was 2Gi, now 1Gi" },
  ]);
  assert.match(checkSpecTransition({ storage: "2Gi" }, {})[0]?.message ?? "", /may not be removed once set/);
});
