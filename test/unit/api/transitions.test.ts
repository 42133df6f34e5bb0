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

test("a class change names the old class, or says there was none (the volumes are on the default class)", () => {
  // GIVEN an instance whose volumes were provisioned without a class: the cluster's default
  assert.deepEqual(checkSpecTransition({ storage: "1Gi" }, { storage: "1Gi", storageClassName: "fast-ssd" }), [
    {
      path: "spec.storageClassName",
      message:
        "may not change once spec.storage is set: volumes keep the class they were provisioned with; was unset " +
        "(the volumes use the cluster's default class), now fast-ssd",
    },
  ]);
  assert.match(
    checkSpecTransition({ storage: "1Gi", storageClassName: "fast" }, { storage: "1Gi", storageClassName: "slow" })[0]
      ?.message ?? "",
    /; was fast, now slow$/,
  );
  assert.match(
    checkSpecTransition({ storage: "1Gi", storageClassName: "fast" }, { storage: "1Gi" })[0]?.message ?? "",
    /; was fast, now unset \(the cluster's default class\)$/,
  );
});
