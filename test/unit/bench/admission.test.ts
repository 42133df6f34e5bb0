import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { armPlan, batchOrder, defaultsMode, podSecurityMode, webhookQuantileMs } from "../../../bench/admission.ts";
import { parseSamples, samplesSince } from "../../../bench/support/prometheus.ts";

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

  it("alternates the interleaved batches ABBA, as many for each arm", () => {
    const order = batchOrder(4);
    assert.deepEqual(order, ["without", "with", "with", "without", "without", "with", "with", "without"]);
    assert.equal(order.filter((arm) => arm === "with").length, 4);
  });

  it("times the webhook server's calls of one phase by path, from its histogram", () => {
    const scrapeText = (fast: number, slow: number) =>
      [
        `controller_runtime_webhook_latency_seconds_bucket{le="0.001",webhook="/validate"} ${fast}`,
        `controller_runtime_webhook_latency_seconds_bucket{le="0.002",webhook="/validate"} ${fast + slow}`,
        `controller_runtime_webhook_latency_seconds_bucket{le="+Inf",webhook="/validate"} ${fast + slow}`,
        `controller_runtime_webhook_latency_seconds_bucket{le="0.001",webhook="/mutate"} 5`,
        `controller_runtime_webhook_latency_seconds_bucket{le="+Inf",webhook="/mutate"} 5`,
      ].join("\n");
    // Before the phase: 100 fast calls; during it: 10 fast and 10 slow.
    const phase = samplesSince(parseSamples(scrapeText(110, 10)), parseSamples(scrapeText(100, 0)));
    assert.equal(webhookQuantileMs(phase, "/validate", 0.5), 1);
    assert.equal(webhookQuantileMs(phase, "/validate", 0.75), 1.5);
    assert.ok(Number.isNaN(webhookQuantileMs(phase, "/mutate", 0.5)), "no /mutate call in the phase");
  });

  it("writes to labelled namespaces by default, to unlabelled ones on request, and names the knob otherwise", () => {
    assert.equal(podSecurityMode(undefined), "baseline");
    assert.equal(podSecurityMode(""), "baseline");
    assert.equal(podSecurityMode("none"), "none");
    assert.throws(() => podSecurityMode("restricted"), /BENCH_ADMISSION_POD_SECURITY must be one of baseline, none/);
  });

  it("installs the namespace defaults as the component does by default (auto), and names the knob otherwise", () => {
    assert.equal(defaultsMode(undefined), "auto");
    assert.equal(defaultsMode("webhook"), "webhook");
    assert.equal(defaultsMode("policy"), "policy");
    assert.throws(
      () => defaultsMode("cel"),
      /BENCH_ADMISSION_DEFAULTS must be one of auto, webhook, policy, got "cel"/,
    );
  });
});
