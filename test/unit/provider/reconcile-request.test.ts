import assert from "node:assert/strict";
import { test } from "node:test";
import { realClock, type Clock } from "../../../kube/clock.ts";
import { newReconcileRequest } from "../../../provider/reconcile-request.ts";

test("a reconcile request is the wall-clock time a person can read, not the monotonic clock's", () => {
  const before = Date.now();
  const value = newReconcileRequest();
  const stamped = Date.parse(value.slice(0, value.lastIndexOf("-")));
  assert.ok(stamped >= before - 1 && stamped <= Date.now() + 1, `${value} is now`);
  assert.ok(value.length <= 256, "fits status.lastHandledReconcileAt");
});

test("two requests never share a value, even from a clock that stands still", () => {
  const frozen: Clock = { ...realClock, wallTimeMs: () => Date.parse("2026-12-01T00:00:00Z") };
  const values = new Set(Array.from({ length: 1000 }, () => newReconcileRequest(frozen)));
  assert.equal(values.size, 1000);
});
