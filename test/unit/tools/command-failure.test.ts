import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { failureText } from "../../../tools/lib/command-failure.ts";

test("a command's own failure is its message, one line; a programming error keeps its stack", () => {
  assert.equal(
    failureText("npm start", new Error("Go is needed to build the toolchain (see above)")),
    "npm start failed: Go is needed to build the toolchain (see above)",
  );
  const bug = failureText("npm start", new TypeError("x is not a function"));
  assert.match(bug, /^npm start failed: TypeError: x is not a function\n\s+at /);
  assert.equal(failureText("npm test", "no cluster"), "npm test failed: no cluster");
});

test("a top-level await that rejects ends the process with that line and exit code 1, no stack trace", () => {
  const script = [
    `import { endOnUncaughtFailure } from ${JSON.stringify(new URL("../../../tools/lib/command-failure.ts", import.meta.url).href)};`,
    'endOnUncaughtFailure("npm start");',
    'await Promise.reject(new Error("Go is not installed"));',
  ].join("\n");
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(result.status, 1);
  assert.equal(result.stderr, "npm start failed: Go is not installed\n");
});
