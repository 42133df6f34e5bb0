import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { validateSpec } from "../../../api/validate.ts";
import { chartValues, setPath, splitImage } from "../../../chart/index.ts";

function spec(input: Record<string, unknown>) {
  const verdict = validateSpec(input);
  if (!verdict.ok) throw new Error(JSON.stringify(verdict.issues));
  return verdict.spec;
}

describe("splitImage", () => {
  test("splits repository, tag and digest; a registry port is not a tag", () => {
    assert.deepEqual(splitImage("nginx:1.27"), { repository: "nginx", tag: "1.27", digest: undefined });
    assert.deepEqual(splitImage("registry.local:5000/team/app"), {
      repository: "registry.local:5000/team/app",
      tag: "latest",
      digest: undefined,
    });
    const digest = `sha256:${"a".repeat(64)}`;
    assert.deepEqual(splitImage(`ghcr.io/x/y:6.9.2@${digest}`), { repository: "ghcr.io/x/y", tag: "6.9.2", digest });
    assert.deepEqual(splitImage(`ghcr.io/x/y@${digest}`), { repository: "ghcr.io/x/y", tag: undefined, digest });
  });
});

describe("chartValues", () => {
  test("places the typed fields at helm create's paths by default", () => {
    // GIVEN a spec with a chart and no valuePaths
    const values = chartValues(spec({ image: "nginx:1.27", replicas: 3, chart: { configMap: "c" } }));
    // THEN replicaCount, image.repository, image.tag and service.port carry the spec
    assert.deepEqual(values, {
      replicaCount: 3,
      image: { repository: "nginx", tag: "1.27" },
      service: { port: 8080 },
    });
  });

  test("uses the chart's own value names, merges spec.values under the typed fields, and skips empty paths", () => {
    // GIVEN podinfo's value names and free-form values that also set a typed path
    const values = chartValues(
      spec({
        image: "ghcr.io/stefanprodan/podinfo:6.9.2",
        port: 9898,
        storage: "2Gi",
        chart: {
          configMap: "podinfo",
          valuePaths: { port: "service.httpPort", imageTag: "image.tag", storage: "persistence.size", replicas: "" },
        },
        values: { redis: { enabled: true }, image: { tag: "ignored", pullPolicy: "Always" }, replicaCount: 5 },
      }),
    );
    // THEN the typed fields win, other values stay, and replicas is left to spec.values / the chart
    assert.deepEqual(values, {
      redis: { enabled: true },
      image: { repository: "ghcr.io/stefanprodan/podinfo", tag: "6.9.2", pullPolicy: "Always" },
      replicaCount: 5,
      service: { httpPort: 9898 },
      persistence: { size: "2Gi" },
    });
  });

  test("does not modify spec.values", () => {
    const input = spec({ image: "nginx:1.27", chart: { configMap: "c" }, values: { image: { tag: "x" } } });
    chartValues(input);
    assert.deepEqual(input.values, { image: { tag: "x" } });
  });
});

describe("setPath", () => {
  test("creates maps on the way and replaces a scalar in the way", () => {
    const values: Record<string, unknown> = { a: 1 };
    setPath(values, "a.b.c", true);
    assert.deepEqual(values, { a: { b: { c: true } } });
  });
});
