import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readableFailures } from "../../../provider/failure-display.ts";
import { unknownValue } from "../../../provider/inputs.ts";

describe("readableFailures: what the CLI prints with `value %v`", () => {
  test("a failure of a string or number input the program gave keeps its property: the CLI prints the value", () => {
    const failures = [
      { property: "image", reason: "must be an OCI image reference" },
      { property: "replicas", reason: "must be an integer" },
    ];
    assert.deepEqual(readableFailures({ image: "Nginx Latest", replicas: -1 }, failures), failures);
  });

  test("a failure of an object input is the resource's, naming the input (not `{map[configMap:{myapp-chart}]}`)", () => {
    const news = { chart: { configMap: "myapp-chart" }, resources: { requests: { cpu: "lots" } } };
    assert.deepEqual(
      readableFailures(news, [
        { property: "chart", reason: 'ConfigMap "myapp-chart" not found' },
        { property: "resources", reason: "requests.cpu: must be a quantity" },
      ]),
      [
        { property: "", reason: 'chart: ConfigMap "myapp-chart" not found' },
        { property: "", reason: "resources: requests.cpu: must be a quantity" },
      ],
    );
  });

  test("a failure of an input the program did not give (a default's rule) is the resource's (not `{<nil>}`)", () => {
    assert.deepEqual(readableFailures({ image: "nginx:1.27" }, [{ property: "resources", reason: "too small" }]), [
      { property: "", reason: "resources: too small" },
    ]);
  });

  test("failures of the whole resource and of unknown values read as they are or are named", () => {
    assert.deepEqual(
      readableFailures({ image: unknownValue }, [
        { property: "", reason: "denied by a webhook" },
        { property: "image", reason: "x" },
      ]),
      [
        { property: "", reason: "denied by a webhook" },
        { property: "", reason: "image: x" },
      ],
    );
  });
});
