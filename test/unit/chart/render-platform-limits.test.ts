/**
 * The platform policy's per-instance limits hold for what a chart renders: every container's image, a workload's
 * replicas, an autoscaler's ceiling and a StatefulSet's claim sizes, each refused naming the object, the field,
 * the limit and its flag. A chart in a tenant's own ConfigMap is the tenant's, so these are its only bounds.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderableChartKinds } from "../../../api/index.ts";
import { parseManifests, platformLimitsRefusal, type PlatformLimits } from "../../../chart/index.ts";
import { planRender } from "../../../operator/chart/plan.ts";

const limits: PlatformLimits = {
  allowedRegistries: ["ghcr.io/acme", "docker.io/library"],
  maxReplicas: 10,
  maxStorage: "100Gi",
};

function objects(yaml: string) {
  return parseManifests(`---\n# Source: app/templates/x.yaml\n${yaml}`).map((manifest) => manifest.object);
}

const deployment = (containers: string, replicas = 2, init = "") => `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: ${replicas}
  template:
    spec:
      ${init}
      containers: ${containers}
`;

describe("platformLimitsRefusal", () => {
  test("admits images from the allowed registries, as Docker reads their names, within the limits", () => {
    const render = objects(
      deployment(`[{ name: a, image: "ghcr.io/acme/app:1" }, { name: b, image: "nginx:1.27" }]`, 10),
    );
    assert.equal(platformLimitsRefusal(render, limits), undefined);
  });

  test("refuses a container or init container image from another registry, naming the field", () => {
    const main = objects(deployment(`[{ name: a, image: "ghcr.io/acme-evil/app:1" }]`));
    assert.deepEqual(platformLimitsRefusal(main, limits), {
      reason: "ChartImageNotAllowed",
      message:
        'Deployment/web spec.template.spec.containers[0].image is "ghcr.io/acme-evil/app:1", not from a registry ' +
        "the platform allows (only ghcr.io/acme, docker.io/library, --allowed-registries)",
    });
    const init = objects(
      deployment(`[{ name: a, image: nginx }]`, 1, `initContainers: [{ name: i, image: "evil.io/x" }]`),
    );
    assert.match(
      platformLimitsRefusal(init, limits)?.message ?? "",
      /spec\.template\.spec\.initContainers\[0\]\.image is "evil\.io\/x"/,
    );
  });

  test("refuses more replicas than an instance may have, and an autoscaler that may scale past them", () => {
    assert.deepEqual(platformLimitsRefusal(objects(deployment(`[{ name: a, image: nginx }]`, 5000)), limits), {
      reason: "ChartReplicasNotAllowed",
      message:
        "Deployment/web spec.replicas is 5000, more than the platform allows per instance (at most 10, --max-replicas)",
    });
    const hpa = objects(`apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: { name: web }
spec: { minReplicas: 1, maxReplicas: 50, scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: web } }
`);
    assert.equal(platformLimitsRefusal(hpa, limits)?.reason, "ChartReplicasNotAllowed");
    assert.match(platformLimitsRefusal(hpa, limits)?.message ?? "", /spec\.maxReplicas is 50/);
  });

  test("refuses workloads that each fit but run more replicas together than an instance may have", () => {
    const each = (name: string) => deployment(`[{ name: a, image: nginx }]`, 6).replace("name: web", `name: ${name}`);
    assert.equal(platformLimitsRefusal(objects(each("web")), limits), undefined);
    assert.deepEqual(platformLimitsRefusal([...objects(each("web")), ...objects(each("cache"))], limits), {
      reason: "ChartReplicasNotAllowed",
      message:
        "the chart runs up to 12 replicas in all (its workloads' spec.replicas, or their autoscalers' maxReplicas), " +
        "more than the platform allows per instance (at most 10, --max-replicas)",
    });
  });

  test("refuses a claim template larger than a volume may be", () => {
    const statefulSet = objects(`apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  replicas: 1
  template: { spec: { containers: [{ name: a, image: nginx }] } }
  volumeClaimTemplates:
  - metadata: { name: data }
    spec: { resources: { requests: { storage: 10Gi } } }
  - metadata: { name: wal }
    spec: { resources: { requests: { storage: 1Pi } } }
`);
    assert.deepEqual(platformLimitsRefusal(statefulSet, limits), {
      reason: "ChartStorageNotAllowed",
      message:
        "StatefulSet/db spec.volumeClaimTemplates[1].spec.resources.requests.storage is 1Pi, more than the platform " +
        "allows per volume (at most 100Gi, --max-storage)",
    });
  });

  test("holds nothing back where the platform sets no limit", () => {
    const render = objects(deployment(`[{ name: a, image: "evil.io/x" }]`, 5000));
    assert.equal(platformLimitsRefusal(render, { allowedRegistries: [] }), undefined);
  });

  test("is part of the render's plan: the whole render is refused, nothing applied", () => {
    const manifests = parseManifests(
      `---\n# Source: app/templates/x.yaml\n${deployment(`[{ name: a, image: "evil.io/x" }]`)}`,
    );
    const instance = { name: "web", namespace: "shop", uid: "uid-1" };
    const plan = planRender(manifests, instance, renderableChartKinds, {
      podSecurityLevel: "Baseline",
      platform: limits,
    });
    assert.equal(plan.ok ? undefined : plan.refusal.reason, "ChartImageNotAllowed");
  });
});
