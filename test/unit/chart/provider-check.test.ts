import assert from "node:assert/strict";
import { test } from "node:test";
import { desiredInstance } from "../../../provider/manifest.ts";
import { checkInputs } from "../../../provider/check.ts";
import type { InstanceInputs } from "../../../provider/inputs.ts";

const base = { owner: "org/project/dev", logicalName: "web", image: "nginx:1.27" };

test("MyAppInstance accepts spec.chart and spec.values and applies them", () => {
  const chart = { configMap: "myapp-chart", valuePaths: { port: "service.httpPort" } };
  const outcome = checkInputs({}, { ...base, chart, values: { redis: { enabled: true } } });
  assert.deepEqual(outcome.failures, []);
  const spec = desiredInstance(outcome.inputs as unknown as InstanceInputs)["spec"] as Record<string, unknown>;
  assert.deepEqual(spec["chart"], chart);
  assert.deepEqual(spec["values"], { redis: { enabled: true } });
});

test("a bad chart fails the preview naming the field", () => {
  const outcome = checkInputs({}, { ...base, chart: { oci: "oci://registry.example.com/charts/myapp" } });
  assert.deepEqual(outcome.failures, [
    {
      property: "chart",
      reason: "version: is required with oci or repo: charts from a registry or repository are pinned by version",
    },
  ]);
});
