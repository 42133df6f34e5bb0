import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { childLabelRequirements, operatorAdmissionPolicy } from "../../../components/admission-policy.ts";
import { childLabels } from "../../../operator/desired/index.ts";
import { ownedObject } from "../../../operator/chart/owned.ts";
import { settingsFor } from "./settings-fixture.ts";

describe("operatorAdmissionPolicy", () => {
  const { policy, binding } = operatorAdmissionPolicy(settingsFor());

  it("matches only the operator's ServiceAccount, on the kinds it writes, including deletes", () => {
    assert.deepEqual(policy.spec?.matchConditions, [
      {
        name: "operator-service-account",
        expression: "request.userInfo.username == 'system:serviceaccount:myapp-system:myapp-operator'",
      },
    ]);
    const rules = policy.spec?.matchConstraints?.resourceRules ?? [];
    assert.deepEqual(
      rules.flatMap((rule) => rule.resources ?? []),
      ["deployments", "statefulsets", "services", "persistentvolumeclaims"],
    );
    for (const rule of rules) assert.deepEqual(rule.operations, ["CREATE", "UPDATE", "DELETE"]);
    assert.equal(policy.spec?.failurePolicy, "Fail");
  });

  it("requires the labels the operator's children carry, an owning instance, and no host access", () => {
    const expressions = (policy.spec?.validations ?? []).map((v) => v.expression ?? "");
    assert.equal(expressions.length, 3);
    assert.match(expressions[0] ?? "", /'app\.kubernetes\.io\/managed-by'\] == 'myapp-operator'/);
    assert.match(expressions[1] ?? "", /r\.kind == 'MyAppInstance' && has\(r\.controller\) && r\.controller/);
    for (const field of ["hostNetwork", "hostPID", "hostIPC", "hostPath", "privileged", "initContainers"]) {
      assert.ok(expressions[2]?.includes(field), field);
    }
  });

  it("holds the operator to the labels its builders really put on every child", () => {
    const labels = childLabels("web");
    for (const [key, value] of Object.entries(childLabelRequirements)) assert.equal(labels[key], value, key);
  });

  it("admits a chart's objects under their own names: only the operator's label is required", () => {
    // GIVEN a Deployment a public chart rendered (its own app.kubernetes.io/name), as the operator applies it
    const rendered = ownedObject(
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "podinfo", labels: { "app.kubernetes.io/name": "podinfo" } },
      },
      { name: "web", namespace: "shop", uid: "0000" },
    );
    // THEN it carries every label the policy requires
    for (const [key, value] of Object.entries(childLabelRequirements)) {
      assert.equal(rendered.metadata.labels?.[key], value, key);
    }
  });

  it("is bound with Deny", () => {
    assert.deepEqual(binding.spec, { policyName: policy.metadata?.name, validationActions: ["Deny"] });
  });
});
