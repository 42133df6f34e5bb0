import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  forgetAppliedTo,
  lastUpComplete,
  originOf,
  pendingOperations,
  recordAppliedTo,
  stackStateFile,
  stateOrigin,
  upPlan,
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

describe("what npm start runs before its up", () => {
  it("clears pending creates in a refresh of its own after an up cut short, rather than up --refresh", () => {
    // GIVEN the last up on this cluster did not run to its end
    // WHEN npm start plans its up
    const plan = upPlan("this-cluster", false, 0);
    // THEN a refresh with --clear-pending-creates runs first (up --refresh cannot clear them), and up has no --refresh
    assert.deepEqual(plan, { clearPendingCreates: "the last up was cut short" });
  });

  it("clears pending operations however they came, even after a complete up", () => {
    // GIVEN a state with pending operations (a pulumi stopped by a second Ctrl-C, outside npm start)
    // WHEN npm start plans its up
    // THEN they are cleared first, and said so
    assert.deepEqual(upPlan("this-cluster", true, 2), {
      clearPendingCreates: "2 pending operations of an interrupted deployment",
    });
    assert.deepEqual(upPlan("unknown", true, 1), {
      clearPendingCreates: "1 pending operation of an interrupted deployment",
    });
  });

  it("refreshes within up for a state of another or no cluster, and not at all otherwise", () => {
    assert.deepEqual(upPlan("unknown", true, 0), { refresh: "state of another or no cluster" });
    assert.deepEqual(upPlan("this-cluster", true, 0), {});
    assert.deepEqual(upPlan("recreated-cluster", false, 3), {}, "that state is forgotten: nothing to refresh");
  });

  it("counts the pending operations in the local backend's state file; none without a readable one", (t) => {
    // GIVEN the local backend's state of a stack whose last deployment was stopped mid-create
    const dir = mkdtempSync(path.join(tmpdir(), "myapp-state-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = stackStateFile(`file://${dir}`, "dev");
    assert.equal(file, path.join(dir, ".pulumi/stacks/myapp-platform/dev.json"));
    assert.equal(pendingOperations(file), 0, "no state yet");
    mkdirSync(path.dirname(file), { recursive: true });
    const state = (pending: unknown) =>
      JSON.stringify({ version: 3, checkpoint: { latest: { pending_operations: pending } } });
    writeFileSync(file, state([{ type: "creating", resource: { urn: "urn:pulumi:dev::p::t::db" } }]));
    // WHEN they are counted THEN there is one; a state without any, or not JSON, has none
    assert.equal(pendingOperations(file), 1);
    writeFileSync(file, state(null));
    assert.equal(pendingOperations(file), 0);
    writeFileSync(file, "{ torn");
    assert.equal(pendingOperations(file), 0);
  });
});
