import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { privateTmp, summarizeLeftovers } from "../../../tools/lib/private-tmp.ts";

test("a private temporary directory goes with what was left in it, and names it once", () => {
  const tmp = privateTmp("myapp-unit");
  assert.equal(tmp.env.TMPDIR, tmp.dir);
  assert.ok(!tmp.env.NODE_COMPILE_CACHE.startsWith(tmp.dir), "Node's code cache outlives the directory");
  writeFileSync(path.join(tmp.dir, "kubeconfig123"), "");
  mkdirSync(path.join(tmp.dir, "automation-abc"));
  writeFileSync(path.join(tmp.dir, "automation-abc", "Pulumi.yaml"), "");
  assert.deepEqual(tmp.remove().sort(), ["automation-abc", "kubeconfig123"]);
  assert.equal(existsSync(tmp.dir), false);
  assert.deepEqual(tmp.remove(), [], "a second removal finds nothing");
});

test("leftovers are grouped by the name they start with, largest group first", () => {
  const names = ["kubeconfig1", "kubeconfig22", "automation-x1Yz9Q", "kubeconfig3", "automation-Ab3dEf", "v.json"];
  assert.equal(summarizeLeftovers(names), "kubeconfig* ×3, automation-* ×2, v.json* ×1");
  assert.equal(summarizeLeftovers([]), "");
});
