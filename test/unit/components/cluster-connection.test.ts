import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { kubeconfigText } from "../../../components/cluster-connection.ts";

const text = "apiVersion: v1\nkind: Config\nclusters: []\n";

test("kubeconfig text is kept as it is; a path is read, so state holds no path of this machine", (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "kubeconfig-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "config");
  writeFileSync(file, text);
  assert.equal(kubeconfigText(text).kubeconfig, text);
  assert.equal(kubeconfigText(file).kubeconfig, text);
  // Nothing given: KUBECONFIG's first entry, as kubectl.
  assert.equal(kubeconfigText(undefined, { KUBECONFIG: `${file}${path.delimiter}/nope` }).kubeconfig, text);
  // A file this machine does not have: no text, and the source says which file.
  assert.deepEqual(kubeconfigText("/nope/config"), { kubeconfig: undefined, source: "the file /nope/config" });
});
