import assert from "node:assert/strict";
import { test } from "node:test";
import { finalizer } from "../../../../api/index.ts";
import { pendingDeletion } from "../../../../provider/waiting/instance-wait.ts";

test("a deletion waiting on the operator's finalizer asks whether the operator runs; others are named as they are", () => {
  assert.equal(
    pendingDeletion([finalizer]),
    `waiting for the operator to clean up and remove ${finalizer} (is it running?)`,
  );
  assert.equal(
    pendingDeletion([finalizer, "example.org/backup"]),
    `waiting for the operator to clean up and remove ${finalizer} (is it running?), and for example.org/backup`,
  );
  assert.equal(pendingDeletion(["example.org/backup"]), "waiting for example.org/backup");
  assert.equal(pendingDeletion([]), "waiting for the apiserver");
});
