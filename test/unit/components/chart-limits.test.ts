/**
 * MyAppOperator's chart limits: checked arguments, the operator flags they become, and what they cost the
 * operator's container (Node's heap leaves room for K renders; /tmp holds K charts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { operatorDeployment } from "../../../components/deployment.ts";
import { operatorFlags } from "../../../components/operator-flags.ts";
import { resolveSettings, type MyAppOperatorArgs } from "../../../components/settings.ts";

const image = "registry.example.com/myapp-operator:1.0.0";

function settingsOf(args: MyAppOperatorArgs) {
  const result = resolveSettings("myapp", { image, ...args });
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.settings;
}

function issuesOf(args: MyAppOperatorArgs) {
  const result = resolveSettings("myapp", { image, ...args });
  return result.ok ? [] : result.issues;
}

describe("chart limits", () => {
  it("become operator flags only where they differ from the operator's defaults", () => {
    const defaults = operatorFlags(settingsOf({}));
    assert.ok(!defaults.some((flag) => /^--(render-|max-concurrent-renders|chart-sources)/.test(flag)));
    const flags = operatorFlags(
      settingsOf({
        maxConcurrentRenders: 3,
        renderLimits: { memoryMiB: 128, cpuSeconds: 10, valuesKiB: 32 },
        chartSources: ["oci://ghcr.io/org/", "https://charts.example.com/"],
        resources: { limits: { memory: "2Gi" } },
      }),
    );
    for (const flag of [
      "--max-concurrent-renders=3",
      "--render-memory=128",
      "--render-cpu=10",
      "--render-values=32",
      "--chart-sources=oci://ghcr.io/org/,https://charts.example.com/",
    ]) {
      assert.ok(flags.includes(flag), `${flag} in ${flags.join(" ")}`);
    }
    assert.ok(!flags.some((flag) => flag.startsWith("--render-timeout")));
  });

  it("refuses bad values, naming the field", () => {
    const fields = (args: MyAppOperatorArgs) => issuesOf(args).map((issue) => issue.field);
    assert.deepEqual(fields({ maxConcurrentRenders: 0 }), ["maxConcurrentRenders"]);
    assert.deepEqual(fields({ renderLimits: { memoryMiB: 32 } }), ["renderLimits.memoryMiB"]);
    assert.deepEqual(fields({ renderLimits: { cpuSeconds: 1.5 } }), ["renderLimits.cpuSeconds"]);
    assert.deepEqual(fields({ renderLimits: { valuesKiB: 0 } }), ["renderLimits.valuesKiB"]);
    assert.deepEqual(fields({ chartSources: ["ftp://x/"] }), ["chartSources"]);
    // 6 renders of 256 MiB, the parsing thread's 128 MiB and the review thread's 64 in the default 1536Mi container
    // leave Node nothing; without the webhooks, no review thread
    const [memory] = issuesOf({ maxConcurrentRenders: 6 });
    assert.equal(memory?.field, "resources.limits.memory");
    assert.match(
      memory?.message ?? "",
      /and the 128 MiB of the thread that parses their output \(and the 64 MiB of the webhooks' thread .*at least 1984Mi/,
    );
    const [withoutWebhooks] = issuesOf({ maxConcurrentRenders: 6, webhooks: { enabled: false } });
    assert.match(
      withoutWebhooks?.message ?? "",
      /and the 128 MiB of the thread that parses their output; .*at least 1920Mi/,
    );
    // An external operator has no container (its `resources` are refused): no limit to fit its renders in
    const external = resolveSettings("myapp", {
      operatorPlacement: "external",
      maxConcurrentRenders: 4,
      renderLimits: { memoryMiB: 512 },
      webhooks: { enabled: false },
    });
    assert.deepEqual(external.ok ? [] : external.issues, []);
  });

  it("refuses a chart source with a comma or listed twice, naming its index: the flag joins them with commas", () => {
    // GIVEN a source whose comma would split --chart-sources in two, and one prefix twice (written differently)
    const issues = issuesOf({
      chartSources: ["oci://r.example.com/a,b/", "https://charts.example.com/", "https://Charts.example.com"],
    });
    // THEN each is refused by index, saying what to do
    assert.deepEqual(issues, [
      {
        field: "chartSources[0]",
        message:
          '"oci://r.example.com/a,b/" contains a comma, which separates the entries of the operator\'s --chart-sources; list each entry on its own',
      },
      {
        field: "chartSources[2]",
        message:
          '"https://Charts.example.com" is chartSources[1] ("https://charts.example.com/") again, written differently; list it once',
      },
    ]);
    // AND the same source twice as written
    assert.deepEqual(issuesOf({ chartSources: ["oci://ghcr.io/org/", "oci://ghcr.io/org/"] }), [
      { field: "chartSources[1]", message: '"oci://ghcr.io/org/" is listed twice; list it once' },
    ]);
  });

  it("size the container: Node's heap leaves room for K renders, /tmp holds K charts", () => {
    const podOf = (args: MyAppOperatorArgs) => operatorDeployment(settingsOf(args))?.spec?.template.spec;
    const heap = (args: MyAppOperatorArgs) =>
      /--max-old-space-size=(\d+)/.exec(
        podOf(args)?.containers[0]?.env?.find((e) => e.name === "NODE_OPTIONS")?.value ?? "",
      )?.[1];
    // (1536 - 2 × 256 - 128 for the parsing thread - 64 for the webhooks' review thread) × 3/4
    assert.equal(heap({}), "624");
    assert.equal(heap({ maxConcurrentRenders: 1 }), "816"); // (1536 - 256 - 128 - 64) × 3/4
    assert.equal(heap({ renderLimits: { memoryMiB: 128 } }), "816");
    assert.equal(heap({ webhooks: { enabled: false } }), "672"); // no review thread without the webhooks
    const tmp = (args: MyAppOperatorArgs) =>
      podOf(args)?.volumes?.find((volume) => volume.name === "tmp")?.emptyDir?.sizeLimit;
    assert.equal(tmp({}), "104Mi"); // 64 + 2 renders × (10 MiB chart + as much again)
    assert.equal(tmp({ maxConcurrentRenders: 1 }), "84Mi");
  });
});
