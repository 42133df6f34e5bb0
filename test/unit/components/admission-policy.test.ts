import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderableChartKinds } from "../../../api/index.ts";
import { childLabelRequirements, operatorAdmissionPolicy } from "../../../components/admission-policy.ts";
import { childLabels } from "../../../operator/desired/index.ts";
import { ownedObject } from "../../../operator/chart/owned.ts";
import { settingsFor } from "./settings-fixture.ts";

describe("operatorAdmissionPolicy", () => {
  const { policy, binding } = operatorAdmissionPolicy(settingsFor());

  it("matches only the operator's ServiceAccount, on every kind it may write, including deletes", () => {
    assert.deepEqual(policy.spec?.matchConditions, [
      {
        name: "operator-service-account",
        expression: "request.userInfo.username == 'system:serviceaccount:myapp-system:myapp-operator'",
      },
      {
        name: "not-the-webhook-certificate",
        expression:
          "!(request.resource.resource == 'secrets' && request.namespace == 'myapp-system' && " +
          "request.name == 'myapp-operator-webhook-cert')",
      },
    ]);
    // Without webhooks there is no certificate to spare.
    assert.equal(
      operatorAdmissionPolicy(settingsFor({ webhooks: { enabled: false } })).policy.spec?.matchConditions?.length,
      1,
    );
    const rules = policy.spec?.matchConstraints?.resourceRules ?? [];
    // Every kind a chart can render, allowed on this platform or not (a token widened by hand is held too), and
    // the claims the operator grows and deletes.
    const matched = rules.flatMap((rule) =>
      (rule.resources ?? []).map(
        (resource) => `${rule.apiGroups?.[0] ?? ""}/${rule.apiVersions?.[0] ?? ""}/${resource}`,
      ),
    );
    assert.deepEqual(matched.sort(), [
      "/v1/configmaps",
      "/v1/persistentvolumeclaims",
      "/v1/secrets",
      "/v1/serviceaccounts",
      "/v1/services",
      "apps/v1/deployments",
      "apps/v1/statefulsets",
      "autoscaling/v2/horizontalpodautoscalers",
      "networking.k8s.io/v1/ingresses",
      "policy/v1/poddisruptionbudgets",
    ]);
    for (const kind of renderableChartKinds)
      assert.ok(
        matched.some((m) => m.endsWith(`/${kind.plural}`)),
        kind.kind,
      );
    for (const rule of rules) assert.deepEqual(rule.operations, ["CREATE", "UPDATE", "DELETE"]);
    assert.equal(policy.spec?.failurePolicy, "Fail");
  });

  it("requires the operator's label, an owning instance, no host access, the default ServiceAccount, no token Secrets and no externalIPs", () => {
    const expressions = (policy.spec?.validations ?? []).map((v) => v.expression ?? "");
    assert.equal(expressions.length, 6);
    assert.match(expressions[0] ?? "", /'app\.kubernetes\.io\/managed-by'\] == 'myapp-operator'/);
    assert.match(expressions[1] ?? "", /r\.kind == 'MyAppInstance' && has\(r\.controller\) && r\.controller/);
    for (const field of ["hostNetwork", "hostPID", "hostIPC", "hostPath", "privileged", "initContainers"]) {
      assert.ok(expressions[2]?.includes(field), field);
    }
    // GIVEN the default allow-list (no ServiceAccounts) THEN only the namespace's default ServiceAccount
    assert.match(expressions[3] ?? "", /serviceAccountName == 'default'/);
    assert.match(expressions[3] ?? "", /serviceAccount == 'default'/, "the deprecated alias too");
    assert.ok(!expressions[3]?.includes("startsWith"), "no ServiceAccount named after the instance");
    assert.match(expressions[4] ?? "", /object\.type != 'kubernetes\.io\/service-account-token'/);
    assert.match(expressions[5] ?? "", /size\(object\.spec\.externalIPs\) == 0/);
    for (const validation of policy.spec?.validations ?? []) assert.equal(validation.reason, "Forbidden");
  });

  it("admits a ServiceAccount named after the instance only where charts may render ServiceAccounts", () => {
    // GIVEN a platform that opted into chart ServiceAccounts
    const wide = operatorAdmissionPolicy(
      settingsFor({ chartKinds: ["apps/v1/Deployment", "v1/Service", "v1/ServiceAccount"] }),
    ).policy;
    const rule = wide.spec?.validations?.[3];
    // THEN the controlling instance's name, or a name it prefixes with '-', is allowed too
    assert.match(
      rule?.expression ?? "",
      /serviceAccountName == r\.name \|\| .*serviceAccountName\.startsWith\(r\.name \+ '-'\)/,
    );
    assert.match(rule?.message ?? "", /named after the MyAppInstance/);
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
