import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { armPlan, podSecurityMode, webhookDurations } from "../../../bench/admission.ts";

describe("admission benchmark", () => {
  it("runs the arms ABBA, each in a namespace of its own", () => {
    const plan = armPlan("bench-adm-x", 3);
    assert.deepEqual(
      plan.map((step) => `${step.round}:${step.arm}`),
      ["1:without", "1:with", "2:with", "2:without", "3:without", "3:with"],
    );
    assert.equal(new Set(plan.map((step) => step.namespace)).size, plan.length);
    assert.equal(plan[1]?.namespace, "bench-adm-x-with-1");
  });

  it("takes the webhook server's answered calls by path, and nothing else", () => {
    const durations = webhookDurations([
      { msg: "webhook request", path: "/mutate", status: 200, ms: 3 },
      { msg: "webhook request", path: "/validate", status: 200, ms: 2 },
      { msg: "webhook request", path: "/validate", status: 400, ms: 1 },
      { msg: "webhook request", path: "/healthz", status: 200, ms: 9 },
      { msg: "admission: reviewed", path: "/mutate", status: 200, ms: 7 },
      { msg: "webhook request", path: "/mutate", status: 200, ms: 4 },
    ]);
    assert.deepEqual(durations, { "/mutate": [3, 4], "/validate": [2] });
  });

  it("writes to labelled namespaces by default, to unlabelled ones on request, and names the knob otherwise", () => {
    assert.equal(podSecurityMode(undefined), "baseline");
    assert.equal(podSecurityMode(""), "baseline");
    assert.equal(podSecurityMode("none"), "none");
    assert.throws(() => podSecurityMode("restricted"), /BENCH_ADMISSION_POD_SECURITY must be one of baseline, none/);
  });
});
