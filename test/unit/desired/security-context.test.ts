import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { desiredDeployment, desiredSecurityContext, desiredStatefulSet } from "../../../operator/desired/index.ts";
import { instance, restrictedContainer, restrictedPod } from "./fixtures.ts";

describe("desiredSecurityContext", () => {
  it("is Pod Security restricted by default, for both workload kinds", () => {
    // GIVEN instances that say nothing about security
    for (const workload of [desiredDeployment(instance()), desiredStatefulSet(instance({ storage: "1Gi" }))]) {
      // THEN the pod runs as non-root under RuntimeDefault seccomp, the container escalates nothing, drops ALL
      const pod = workload.spec.template.spec;
      assert.deepEqual(pod.securityContext, restrictedPod);
      assert.deepEqual(pod.containers[0]?.securityContext, restrictedContainer);
    }
  });

  it("spells out the Baseline opt-out, so an apply undoes Restricted on a live pod template", () => {
    // GIVEN an instance that opts out
    const pod = desiredDeployment(instance({ podSecurityLevel: "Baseline" })).spec.template.spec;
    // THEN root and escalation are explicitly allowed and nothing is dropped; seccomp stays RuntimeDefault
    assert.deepEqual(pod.securityContext, { runAsNonRoot: false, seccompProfile: { type: "RuntimeDefault" } });
    assert.deepEqual(pod.containers[0]?.securityContext, {
      allowPrivilegeEscalation: true,
      capabilities: { drop: [] },
    });
  });

  it("Restricted written out is the same as left out", () => {
    assert.deepEqual(desiredSecurityContext("Restricted"), {
      pod: restrictedPod,
      container: restrictedContainer,
    });
  });
});
