import assert from "node:assert/strict";
import { test } from "node:test";
import { splitTestArguments } from "../../../tools/lib/test-arguments.ts";

test("npm test's arguments: options before files, wherever given; a value may be the next argument", () => {
  assert.deepEqual(splitTestArguments(["--test-name-pattern=hostile"]), {
    runnerOptions: ["--test-name-pattern=hostile"],
    paths: [],
  });
  assert.deepEqual(splitTestArguments(["test/unit/a.test.ts", "--test-name-pattern", "hostile tenants", "--"]), {
    runnerOptions: ["--test-name-pattern=hostile tenants"],
    paths: ["test/unit/a.test.ts"],
  });
  assert.deepEqual(splitTestArguments(["--test-only", "test/unit/a.test.ts"]), {
    runnerOptions: ["--test-only"],
    paths: ["test/unit/a.test.ts"],
  });
});
