import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readDefaultsPolicyServed, servesDefaultsPolicy } from "../../../components/cluster-admission-apis.ts";

describe("servesDefaultsPolicy", () => {
  const v1 = (...names: string[]) => ({ resources: names.map((name) => ({ name })) });

  it("needs the policy and its binding in admissionregistration.k8s.io/v1 (Kubernetes 1.36+)", () => {
    const before136 = [
      "validatingadmissionpolicies",
      "validatingadmissionpolicybindings",
      "mutatingwebhookconfigurations",
    ];
    assert.equal(servesDefaultsPolicy(v1(...before136)), false);
    assert.equal(servesDefaultsPolicy(v1(...before136, "mutatingadmissionpolicies")), false);
    assert.equal(
      servesDefaultsPolicy(v1(...before136, "mutatingadmissionpolicies", "mutatingadmissionpolicybindings")),
      true,
    );
    assert.equal(servesDefaultsPolicy({}), false);
  });

  it("says why when there is no cluster to ask, instead of guessing", async () => {
    const read = await readDefaultsPolicyServed({ kubeconfig: undefined, source: "KUBECONFIG" });
    assert.deepEqual(read, { unavailable: "no kubeconfig (KUBECONFIG)" });
  });
});
