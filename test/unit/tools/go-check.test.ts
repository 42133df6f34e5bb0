import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../../tools/lib/paths.ts";

test("the toolchain says up front when Go is too old, and what to install", (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "old-go-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, "go"), "#!/bin/sh\necho go1.20.1\n");
  chmodSync(path.join(dir, "go"), 0o755);
  const result = spawnSync("bash", [path.join(repoRoot, "tools/toolchain.sh"), "check"], {
    env: { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH}` },
    encoding: "utf8",
  });
  assert.equal(result.status, 1);
  assert.match(
    result.stderr,
    /Go 1\.20\.1 is too old: the toolchain needs Go >= 1\.\d+(\.\d+)? .*https:\/\/go\.dev\/dl\//,
  );
});
