/**
 * Ready requires the chart's main workload to run spec.image: a chart that ignores the image values (its own tag,
 * no digest support) is reported as ImageMismatch instead of Ready; a digest a platform's default chart would not
 * get is refused (ImageDigestUnmapped).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCondition } from "../../../api/index.ts";
import type { ChartRenderer } from "../../../chart/index.ts";
import { imageMismatch, runsImage } from "../../../operator/chart/image-match.ts";
import { PermanentError } from "../../../operator/reconcile/index.ts";
import { harness, type Harness } from "../reconcile/setup.ts";

const digest = `sha256:${"ab".repeat(32)}`;
const other = `sha256:${"cd".repeat(32)}`;

describe("runsImage", () => {
  for (const [image, wanted] of [
    ["nginx:1.27", "nginx:1.27"],
    ["docker.io/library/nginx:1.27", "nginx:1.27"],
    ["docker.io/nginx:1.27", "index.docker.io/library/nginx:1.27"],
    ["nginx:latest", "nginx"],
    [`nginx@${digest}`, `nginx@${digest}`],
    [`nginx:1.27@${digest}`, `nginx@${digest}`],
    [`nginx@${digest}`, `nginx:1.27@${digest}`],
    [`ghcr.io/x/web:2@${digest}`, "ghcr.io/x/web:2"],
    ["registry.example:5000/team/web:1", "registry.example:5000/team/web:1"],
  ] as const) {
    it(`${image} runs ${wanted}`, () => assert.equal(runsImage(image, wanted), true));
  }
  for (const [image, wanted] of [
    ["nginx:1.0", `nginx@${digest}`],
    [`nginx:1.27@${other}`, `nginx:1.27@${digest}`],
    ["nginx:1.27", `nginx:1.27@${digest}`],
    ["nginx:1.26", "nginx:1.27"],
    ["nginx", "nginx:1.27"],
    ["ghcr.io/x/nginx:1.27", "nginx:1.27"],
    ["registry.example:5000/web:1", "registry.example:5001/web:1"],
  ] as const) {
    it(`${image} does not run ${wanted}`, () => assert.equal(runsImage(image, wanted), false));
  }
  it('with the tag left to the chart (valuePaths.imageTag: ""), an untagged spec.image matches any tag', () => {
    assert.equal(runsImage("nginx:1.27", "nginx", true), true);
    assert.equal(runsImage("nginx:1.27", "nginx:1.28", true), false, "a tag the spec names still counts");
    assert.equal(runsImage("ghcr.io/x/nginx:1.27", "nginx", true), false, "the repository still counts");
    assert.equal(runsImage("nginx:1.27", "nginx", false), false);
  });
});

describe("imageMismatch", () => {
  const workload = (...images: string[]) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web" },
    spec: {
      template: {
        spec: {
          initContainers: [{ name: "init", image: `nginx@${digest}` }],
          containers: images.map((image, i) => ({ name: `c${i}`, image })),
        },
      },
    },
  });

  it("is none when any container (a sidecar next to it) runs spec.image", () => {
    assert.equal(imageMismatch(workload("envoy:1", `nginx@${digest}`), `nginx@${digest}`), undefined);
  });

  it("names the workload, what it runs and spec.image; init containers do not count", () => {
    assert.deepEqual(imageMismatch(workload("nginx:1.0"), `nginx@${digest}`), {
      reason: "ImageMismatch",
      message:
        `the chart's main workload Deployment/web runs nginx:1.0, not spec.image nginx@${digest}; map ` +
        "spec.chart.valuePaths (imageRepository, imageTag, imageDigest) to where the chart reads its image",
    });
  });
});

const deployment = (image: string) => `---
# Source: app/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      securityContext: { runAsNonRoot: true, seccompProfile: { type: RuntimeDefault } }
      containers:
        - name: main
          image: ${image}
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
`;

/** A chart like `helm create`'s scaffold: `repository:tag`, and no digest support. */
function scaffoldChart(h: Harness, defaultChart?: object) {
  const renderer: ChartRenderer = {
    render: async (request) => {
      const image = request.values["image"] as { repository: string; tag?: string };
      return { manifest: deployment(`${image.repository}:${image.tag ?? "1.0"}`), hooks: [], crds: [] };
    },
  };
  Object.assign(h.deps, {
    chart: { renderer, fetchChart: async () => new Uint8Array([1]), ...(defaultChart ? { defaultChart } : {}) },
  });
}
const condition = (h: Harness, type: string) => findCondition(h.cluster.instance("web")?.status?.conditions, type);

describe("a chart instance's image", () => {
  it("is Ready when the main workload runs spec.image", async () => {
    const h = harness();
    scaffoldChart(h);
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    assert.equal(condition(h, "Ready")?.status, "True");
  });

  it("is never Ready when the chart drops the digest: Degraded, ImageMismatch, naming both images", async () => {
    // GIVEN a pinned spec.image and a chart that takes no digest (it runs its own default tag)
    const h = harness();
    scaffoldChart(h);
    h.cluster.createInstance("web", { image: `nginx@${digest}`, chart: { configMap: "c" } });
    // WHEN its workload rolled out
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    // THEN not Ready: the status says which image runs instead
    assert.equal(condition(h, "Ready")?.status, "False");
    assert.equal(condition(h, "Degraded")?.reason, "ImageMismatch");
    assert.match(
      condition(h, "Degraded")?.message ?? "",
      /Deployment\/web runs nginx:1\.0, not spec\.image nginx@sha256:/,
    );
  });

  it("a digest the platform's default chart would not get is refused: ImageDigestUnmapped, nothing applied", async () => {
    const h = harness();
    scaffoldChart(h, { oci: "oci://registry.example/charts/web", version: "1.0.0", valuePaths: { imageDigest: "" } });
    h.cluster.createInstance("web", { image: `nginx:1.27@${digest}` });
    await assert.rejects(
      h.run(),
      (error: unknown) => error instanceof PermanentError && error.reason === "ImageDigestUnmapped",
    );
    assert.match(condition(h, "Degraded")?.message ?? "", /has a digest, but the chart .* is given none/);
    assert.ok(!h.cluster.writeLines().some((line) => line.startsWith("apply Deployment")));
  });
});
