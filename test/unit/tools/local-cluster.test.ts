import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { localCluster } from "../../../tools/lib/cluster.ts";
import { localDir } from "../../../tools/lib/paths.ts";

test("the default cluster keeps .local/kubeconfig; another name gets its own files beside it", () => {
  const main = localCluster();
  assert.equal(main.kubeconfig, path.join(localDir, "kubeconfig"));
  const other = localCluster("other");
  assert.equal(other.kubeconfig, path.join(localDir, "kubeconfig-other"));
  for (const key of ["kubeconfig", "dir", "configFile", "provisionerRecord", "provisionerLog"] as const) {
    assert.notEqual(main[key], other[key], `${key} differs`);
  }
});

test("a cluster name that is no DNS label is refused, naming what is allowed", () => {
  for (const bad of ["", "Other", "a_b", "-a", "x".repeat(33), "../up"]) {
    assert.throws(() => localCluster(bad), /lowercase letters, digits and '-'/, bad);
  }
});
