import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { installManifests } from "../../../components/install-manifests.ts";
import { loadCrdManifest } from "../../../components/crd.ts";
import { instancePolicy } from "../../../components/instance-policy.ts";
import { instanceAdmissionScope } from "../../../components/webhooks.ts";
import { settingsFor } from "./settings-fixture.ts";

describe("instancePolicy", () => {
  it("decides in the apiserver the rules that need only the instance, in the webhook's words and scope", () => {
    const settings = settingsFor({
      watchNamespaces: ["team-a"],
      policy: { allowedRegistries: ["index.docker.io/acme", "ghcr.io/team"], maxReplicas: 3, maxStorage: "2Gi" },
    });
    const built = instancePolicy(settings);
    assert.ok(built);
    const { spec } = built.policy;
    assert.equal(built.policy.metadata?.name, "myapp-operator-instances");
    assert.equal(spec?.failurePolicy, "Fail");
    assert.deepEqual(spec?.matchConstraints?.resourceRules?.[0]?.resources, ["myappinstances", "myappinstances/scale"]);
    // Same scope as the webhooks: same namespaces, same writes skipped.
    const scope = instanceAdmissionScope(settings);
    // In each rule, after it, not a matchCondition (one activation less per write): out of scope passes every rule.
    assert.equal(spec?.matchConditions, undefined);
    for (const validation of spec?.validations ?? [])
      assert.ok(
        validation.expression.endsWith(` || !(${scope.matchConditions[0]?.expression})`),
        validation.expression,
      );
    assert.deepEqual(built.binding.spec?.matchResources?.namespaceSelector, scope.namespaceSelector);
    assert.deepEqual(built.binding.spec?.validationActions, ["Deny"]);
    const [registry, replicas, storage, ...rest] = spec?.validations ?? [];
    assert.equal(rest.length, 0);
    // The allow-list normalised as the operator normalises its flag, as one pattern (allowed-images-pattern.ts).
    assert.match(
      registry?.expression ?? "",
      /object\.spec\.image\.matches\(r'\^\(\?:.*\[gG\]\[hH\]\[cC\]\[rR\]\\\.\[iI\]\[oO\]\/team/,
    );
    // Static messages and no variables: the apiserver evaluates every messageExpression on every write.
    assert.equal(spec?.variables, undefined);
    for (const validation of spec?.validations ?? []) assert.equal(validation.messageExpression, undefined);
    assert.match(registry?.message ?? "", /^spec\.image .*only docker\.io\/acme, ghcr\.io\/team, --allowed-registries/);
    // An UPDATE is judged only on what it changes.
    assert.match(registry?.expression ?? "", /oldObject\.spec\.image == object\.spec\.image/);
    assert.match(
      replicas?.expression ?? "",
      /object\.spec\.replicas <= 3 \|\|.*object\.spec\.replicas <= oldObject\.spec\.replicas/,
    );
    assert.match(replicas?.message ?? "", /^spec\.replicas .*at most 3, --max-replicas/);
    assert.match(storage?.expression ?? "", /quantity\(object\.spec\.storage\)\.compareTo\(quantity\('2Gi'\)\) <= 0/);
    for (const validation of spec?.validations ?? []) assert.equal(validation.reason, "Forbidden");
  });

  it("is left out when the policy sets none of its rules, and with the webhooks off", () => {
    assert.equal(instancePolicy(settingsFor({})), undefined);
    assert.equal(instancePolicy(settingsFor({ policy: { namespaceBudget: { instances: 5 } } })), undefined);
    const replicasOnly = instancePolicy(settingsFor({ policy: { maxReplicas: 5 } }));
    assert.equal(replicasOnly?.policy.spec?.validations?.length, 1);
    assert.equal(instancePolicy(settingsFor({ webhooks: { enabled: false } })), undefined);
  });

  it("is installed before the operator, beside the policy on its own writes", () => {
    const manifests = installManifests(settingsFor({ policy: { maxReplicas: 5 } }), loadCrdManifest());
    const names = manifests.map((manifest) => `${manifest.kind}/${manifest.metadata?.name}`);
    const policy = names.indexOf("ValidatingAdmissionPolicy/myapp-operator-instances");
    assert.ok(policy > names.indexOf("ValidatingAdmissionPolicyBinding/myapp-operator-children"), names.join(" "));
    assert.equal(names[policy + 1], "ValidatingAdmissionPolicyBinding/myapp-operator-instances");
    assert.ok(policy < names.indexOf("Deployment/myapp-operator"));
  });
});
