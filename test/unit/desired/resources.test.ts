import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultResources } from "../../../api/index.ts";
import { desiredDeployment, desiredResources } from "../../../operator/desired/index.ts";
import { defaultContainerResources, instance } from "./fixtures.ts";

describe("desiredResources", () => {
  it("gives the documented defaults when the spec says nothing", () => {
    assert.deepEqual(desiredResources(undefined, defaultResources), defaultContainerResources);
    assert.deepEqual(
      desiredDeployment(instance()).spec.template.spec.containers[0]?.resources,
      defaultContainerResources,
    );
  });

  it("takes what the spec sets and defaults the rest", () => {
    // GIVEN a cpu limit and a memory request
    const resources = desiredResources({ requests: { memory: "256Mi" }, limits: { cpu: "2" } }, defaultResources);
    // THEN those are kept, the cpu request and the memory limit are the defaults
    assert.deepEqual(resources, {
      requests: { cpu: "100m", memory: "256Mi" },
      limits: { cpu: "2", memory: "512Mi" },
    });
  });

  it("lowers a default request to a smaller limit the spec sets", () => {
    // GIVEN only a 64Mi memory limit and a 50m cpu limit (below the default requests)
    const resources = desiredResources({ limits: { memory: "64Mi", cpu: "50m" } }, defaultResources);
    // THEN the requests follow the limits down, so the pod is valid
    assert.deepEqual(resources, { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "50m", memory: "64Mi" } });
  });

  it("raises a default limit to a larger request the spec sets", () => {
    const resources = desiredResources({ requests: { memory: "2Gi" } }, defaultResources);
    assert.deepEqual(resources, { requests: { cpu: "100m", memory: "2Gi" }, limits: { memory: "2Gi" } });
  });
});
