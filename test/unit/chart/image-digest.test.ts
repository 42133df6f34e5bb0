/**
 * A digest in spec.image reaches the chart (image.digest unless the spec says where), or the instance is refused:
 * it is never dropped silently, which would run whatever the tag points at today.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { validateSpec } from "../../../api/validate.ts";
import { chartValues } from "../../../chart/values.ts";

const digest = `sha256:${"0123456789abcdef".repeat(4)}`;

function spec(input: Record<string, unknown>) {
  const verdict = validateSpec(input);
  if (!verdict.ok) throw new Error(JSON.stringify(verdict.issues));
  return verdict.spec;
}

describe("a digest in spec.image", () => {
  test("goes to image.digest by default, next to the repository and the tag", () => {
    const values = chartValues(spec({ image: `ghcr.io/x/web:1.2@${digest}`, chart: { configMap: "c" } }));
    assert.deepEqual(values["image"], { repository: "ghcr.io/x/web", tag: "1.2", digest });
  });

  test("goes where spec.chart.valuePaths.imageDigest says", () => {
    const values = chartValues(
      spec({ image: `ghcr.io/x/web@${digest}`, chart: { configMap: "c", valuePaths: { imageDigest: "pin" } } }),
    );
    assert.equal(values["pin"], digest);
  });

  test("with imageDigest mapped to nothing, the spec is refused naming the field", () => {
    const verdict = validateSpec({
      image: `ghcr.io/x/web:1.2@${digest}`,
      chart: { configMap: "c", valuePaths: { imageDigest: "" } },
    });
    assert.ok(!verdict.ok);
    assert.deepEqual(
      verdict.issues.map((issue) => issue.path),
      ["spec.chart.valuePaths.imageDigest"],
    );
    assert.match(verdict.issues[0]?.message ?? "", /may not be empty while spec.image has a digest/);
  });

  test("without a digest, imageDigest may be empty and nothing is set", () => {
    const values = chartValues(
      spec({ image: "ghcr.io/x/web:1.2", chart: { configMap: "c", valuePaths: { imageDigest: "" } } }),
    );
    assert.deepEqual(values["image"], { repository: "ghcr.io/x/web", tag: "1.2" });
  });
});
