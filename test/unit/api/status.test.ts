import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  maxConditions,
  maxConditionTimeLength,
  maxServiceEndpointLength,
  phases,
  validateStatus,
} from "../../../api/index.ts";
import { isDateTime } from "../../../api/date-time.ts";

const condition = {
  type: "Ready",
  status: "True",
  lastTransitionTime: "2025-04-01T12:00:00Z",
  reason: "Ready",
  message: "ok",
};

const paths = (input: unknown): string[] => {
  const verdict = validateStatus(input);
  return verdict.ok ? [] : verdict.issues.map((issue) => issue.path);
};

describe("validateStatus", () => {
  test("accepts an empty status and a full one", () => {
    assert.deepEqual(paths({}), []);
    const full = {
      conditions: [condition],
      observedGeneration: 2,
      replicas: 2,
      readyReplicas: 1,
      phase: "Progressing",
      image: "nginx:1.27",
      message: "Waiting for 1/2 pods 🚀",
      selector: "app.kubernetes.io/instance=x",
      endpoint: "x.shop.svc:8080",
    };
    assert.deepEqual(validateStatus(full), { ok: true, status: full });
  });

  test("bounds the endpoint at a 63-character Service name and namespace with a 5-digit port", () => {
    const longest = `${"s".repeat(63)}.${"n".repeat(63)}.svc:65535`;
    assert.equal(longest.length, maxServiceEndpointLength);
    assert.deepEqual(paths({ endpoint: longest }), []);
    assert.deepEqual(paths({ endpoint: `${longest}0` }), ["status.endpoint"]);
  });

  test("knows the phases", () => {
    assert.deepEqual(phases, ["Pending", "Progressing", "Running", "Degraded", "Deleting"]);
    assert.deepEqual(paths({ phase: "Crashed" }), ["status.phase"]);
  });

  test("checks conditions like metav1.Condition", () => {
    assert.deepEqual(paths({ conditions: [{ ...condition, status: "Maybe" }] }), ["status.conditions[0].status"]);
    assert.deepEqual(paths({ conditions: [{ ...condition, reason: "all good" }] }), ["status.conditions[0].reason"]);
    assert.deepEqual(paths({ conditions: [{ ...condition, reason: undefined }] }), ["status.conditions[0].reason"]);
    assert.deepEqual(paths({ conditions: [{ ...condition, type: "Not Ready" }] }), ["status.conditions[0].type"]);
    assert.deepEqual(paths({ conditions: [condition, { ...condition, status: "False" }] }), ["status.conditions[1]"]);
  });

  test("bounds the conditions at 16, with messages of 32,768 characters as metav1.Condition's", () => {
    const typed = (n: number, message = "m") =>
      Array.from({ length: n }, (_, i) => ({ ...condition, type: `Type${i}`, message }));
    assert.equal(maxConditions, 16);
    assert.deepEqual(paths({ conditions: typed(16, "m".repeat(32768)) }), []);
    assert.deepEqual(paths({ conditions: typed(17) }), ["status.conditions"]);
    const verdict = validateStatus({ conditions: typed(36, "m".repeat(32000)) });
    assert.deepEqual(verdict.ok ? [] : verdict.issues, [
      { path: "status.conditions", message: "must have at most 16 items" },
    ]);
    assert.deepEqual(paths({ conditions: typed(1, "m".repeat(32769)) }), ["status.conditions[0].message"]);
  });

  test("bounds lastTransitionTime, which format: date-time alone does not", () => {
    // The apiserver's check takes a fraction of any length, and ignores what follows a second "t".
    for (const long of [`2025-04-01T12:00:00.${"0".repeat(64)}Z`, `2025-04-01T12:00:00Zt${"x".repeat(64)}`]) {
      assert.ok(isDateTime(long), long);
      assert.deepEqual(paths({ conditions: [{ ...condition, lastTransitionTime: long }] }), [
        "status.conditions[0].lastTransitionTime",
      ]);
    }
    const longest = `2025-04-01T12:00:00.${"9".repeat(maxConditionTimeLength - 26)}+02:00`;
    assert.equal(longest.length, maxConditionTimeLength);
    assert.deepEqual(paths({ conditions: [{ ...condition, lastTransitionTime: longest }] }), []);
  });

  test("counts maxLength in code points, as the apiserver does", () => {
    // 32768 emoji are 65536 UTF-16 units but 32768 characters: exactly at the limit.
    assert.deepEqual(paths({ message: "🚀".repeat(32768) }), []);
    assert.deepEqual(paths({ message: "🚀".repeat(32769) }), ["status.message"]);
  });
});

describe("isDateTime matches kube-openapi's date-time check", () => {
  const valid = [
    "2025-04-01T12:00:00Z",
    "2025-04-01t12:00:00z",
    "2025-04-01T12:00:00.123456789+02:00",
    "2025-04-01T12:00:00,5Z",
    "2024-02-29T23:59:59-11:30",
  ];
  for (const text of valid) test(`accepts ${text}`, () => assert.ok(isDateTime(text)));
  const invalid = [
    "",
    "yesterday",
    "2025-04-01T12:00:00",
    "2025-04-01 12:00:00Z",
    "2025-02-29T00:00:00Z",
    "2025-04-31T00:00:00Z",
    "2025-13-01T00:00:00Z",
    "2025-04-01T24:00:00Z",
    "2025-04-01T12:60:00Z",
    "2025-04-01T12:00:60Z",
    "2025-04-01T12:00:00+0200",
  ];
  for (const text of invalid) test(`rejects ${JSON.stringify(text)}`, () => assert.equal(isDateTime(text), false));
});
