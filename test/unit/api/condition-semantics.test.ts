import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Condition, MyAppInstanceObject } from "../../../api/index.ts";
import {
  Degraded,
  Progressing,
  Ready,
  Reconciling,
  Stalled,
  findCondition,
  isReady,
  setCondition,
} from "../../../api/index.ts";

const earlier = "2025-04-01T12:00:00Z";
const now = new Date("2025-04-02T08:30:15.678Z");

const ready = (status: Condition["status"], extra: Partial<Condition> = {}): Condition => ({
  type: Ready,
  status,
  lastTransitionTime: earlier,
  reason: status === "True" ? "Ready" : "Scaling",
  message: "",
  ...extra,
});

describe("setCondition", () => {
  test("appends a new condition, stamped now to the second", () => {
    const conditions = setCondition([], { type: Ready, status: "False", reason: "Scaling", message: "0/2" }, now);
    assert.deepEqual(conditions, [
      { type: Ready, status: "False", reason: "Scaling", message: "0/2", lastTransitionTime: "2025-04-02T08:30:15Z" },
    ]);
  });

  test("keeps lastTransitionTime while the status stays, updating the rest", () => {
    // GIVEN Ready=False since `earlier`
    const before = [ready("False", { observedGeneration: 1 })];
    // WHEN it is set to False again with a new message
    const after = setCondition(
      before,
      { type: Ready, status: "False", reason: "Scaling", message: "1/2", observedGeneration: 2 },
      now,
    );
    // THEN only the message and generation change
    assert.deepEqual(after, [ready("False", { message: "1/2", observedGeneration: 2 })]);
  });

  test("moves lastTransitionTime when the status flips", () => {
    const after = setCondition([ready("False")], { type: Ready, status: "True", reason: "Ready", message: "" }, now);
    assert.equal(after[0]?.lastTransitionTime, "2025-04-02T08:30:15Z");
  });

  test("replaces in place, leaving other conditions and the input alone", () => {
    const progressing: Condition = { ...ready("True"), type: Progressing, reason: "RolloutComplete" };
    const before = [ready("False"), progressing];
    const frozen = structuredClone(before);
    const after = setCondition(before, { type: Ready, status: "True", reason: "Ready", message: "" }, now);
    assert.deepEqual(
      after.map((c) => c.type),
      [Ready, Progressing],
    );
    assert.equal(after[1], progressing);
    assert.deepEqual(before, frozen);
  });
});

describe("findCondition", () => {
  test("finds by type, or nothing", () => {
    assert.equal(findCondition([ready("True")], Ready)?.status, "True");
    assert.equal(findCondition([ready("True")], Degraded), undefined);
    assert.equal(findCondition(undefined, Ready), undefined);
  });
});

describe("isReady", () => {
  const instance = (generation: number | undefined, conditions: Condition[], observedGeneration?: number) =>
    ({ metadata: { name: "x", generation }, status: { conditions, observedGeneration } }) as Pick<
      MyAppInstanceObject,
      "metadata" | "status"
    >;

  test("Ready=True for the current generation", () => {
    assert.equal(isReady(instance(2, [ready("True", { observedGeneration: 2 })])), true);
    assert.equal(isReady(instance(2, [ready("True", { observedGeneration: 3 })])), true);
  });

  test("not when Ready=True belongs to an older spec", () => {
    assert.equal(isReady(instance(3, [ready("True", { observedGeneration: 2 })])), false);
  });

  test("falls back to status.observedGeneration when the condition has none", () => {
    assert.equal(isReady(instance(2, [ready("True")], 2)), true);
    assert.equal(isReady(instance(2, [ready("True")], 1)), false);
    assert.equal(isReady(instance(2, [ready("True")])), false);
  });

  test("not when Ready is False, Unknown or missing", () => {
    assert.equal(isReady(instance(1, [ready("False", { observedGeneration: 1 })])), false);
    assert.equal(isReady(instance(1, [ready("Unknown", { observedGeneration: 1 })])), false);
    assert.equal(isReady(instance(1, [])), false);
    assert.equal(isReady({ metadata: { name: "x" } }), false);
  });
});

test("condition types are the platform's (Ready, Progressing, Degraded) and kstatus's", () => {
  assert.deepEqual(
    [Ready, Progressing, Degraded, Reconciling, Stalled],
    ["Ready", "Progressing", "Degraded", "Reconciling", "Stalled"],
  );
});
