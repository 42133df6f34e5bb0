import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  forgetAppliedTo,
  lastUpComplete,
  originOf,
  recordAppliedTo,
  stateOrigin,
} from "../../../tools/lib/dev-stack-cluster.ts";

describe("the dev stack's cluster record", () => {
  const now = { server: "https://127.0.0.1:32764", uid: "new" };

  it("trusts a state applied to this cluster", () => {
    assert.equal(originOf({ ...now }, now, "myapp"), "this-cluster");
  });

  it("forgets a state of a cluster recreated at the same address: its objects went with it", () => {
    assert.equal(originOf({ server: now.server, uid: "old" }, now, "myapp"), "recreated-cluster");
  });

  it("forgets a state of this checkout's local cluster recreated on other ports", () => {
    const old = { server: "https://127.0.0.1:32700", uid: "old", localCluster: "myapp" };
    assert.equal(originOf(old, now, "myapp"), "recreated-cluster");
    assert.equal(originOf(old, now, "other"), "unknown", "another local cluster may still hold them");
  });

  it("refreshes for another address or no record: that cluster may still hold the objects", () => {
    assert.equal(originOf({ server: "https://10.0.0.1:6443", uid: "old" }, now, "myapp"), "unknown");
    assert.equal(originOf(undefined, now, "myapp"), "unknown");
    assert.equal(originOf({ server: now.server, uid: "" }, now, "myapp"), "this-cluster", "no uid: by address");
  });

  it("records an up before it runs and once it ran to its end; down forgets the record", (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), "myapp-applied-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "dev.cluster.json");
    assert.equal(lastUpComplete(file), true, "no record: nothing was cut short");
    recordAppliedTo(file, now, "myapp", false);
    assert.equal(stateOrigin(file, now, "myapp"), "this-cluster");
    assert.equal(lastUpComplete(file), false, "an up cut short: the next refreshes");
    recordAppliedTo(file, now, "myapp", true);
    assert.equal(lastUpComplete(file), true);
    forgetAppliedTo(file);
    assert.equal(stateOrigin(file, now, "myapp"), "unknown");
  });
});
