import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadCrdManifest } from "../../../components/crd.ts";
import { namespaceDefaultsPolicy } from "../../../components/defaults-policy.ts";
import { installManifests } from "../../../components/install-manifests.ts";
import { operatorFlags } from "../../../components/operator-flags.ts";
import { operatorRbac } from "../../../components/rbac-objects.ts";
import { namespaceDefaultsScope, operatorWebhookConfigurations } from "../../../components/webhooks.ts";
import { settingsFor } from "./settings-fixture.ts";

describe("namespaceDefaultsPolicy", () => {
  it("gives the webhook's default in the apiserver, to the writes the webhook would have been called for", () => {
    const settings = settingsFor({ watchNamespaces: ["team-a"], webhooks: { defaults: "policy" } });
    const built = namespaceDefaultsPolicy(settings);
    assert.ok(built);
    assert.equal(built.policy.apiVersion, "admissionregistration.k8s.io/v1");
    assert.equal(built.policy.metadata?.name, "myapp-operator-defaults");
    const { spec } = built.policy;
    assert.equal(spec?.failurePolicy, "Fail");
    assert.equal(spec?.reinvocationPolicy, "Never");
    assert.deepEqual(spec?.matchConstraints?.resourceRules?.[0]?.resources, ["myappinstances"]);
    const scope = namespaceDefaultsScope(settings);
    assert.deepEqual(spec?.matchConditions, scope.matchConditions);
    assert.deepEqual(built.binding.spec?.matchResources?.namespaceSelector, scope.namespaceSelector);
    assert.equal(built.binding.spec?.policyName, "myapp-operator-defaults");
    assert.deepEqual(spec?.mutations, [
      {
        patchType: "JSONPatch",
        jsonPatch: { expression: '[JSONPatch{op: "add", path: "/spec/podSecurityLevel", value: "Baseline"}]' },
      },
    ]);
  });

  it("replaces the mutating webhook: no configuration, no flag to inject one, no RBAC on one", () => {
    const settings = settingsFor({ webhooks: { defaults: "policy" } });
    const webhooks = operatorWebhookConfigurations(settings);
    assert.ok(webhooks);
    assert.equal(webhooks.mutating, undefined);
    assert.ok(operatorFlags(settings).includes("--webhook-defaults=policy"));
    assert.ok(!operatorFlags(settingsFor()).some((flag) => flag.startsWith("--webhook-defaults")));
    const resources = operatorRbac(settings).clusterRole.rules?.flatMap((rule) => rule.resources ?? []);
    assert.ok(resources?.includes("validatingwebhookconfigurations"));
    assert.ok(!resources?.includes("mutatingwebhookconfigurations"), resources?.join(" "));
    const kinds = installManifests(settings, loadCrdManifest()).map((manifest) => manifest.kind);
    assert.ok(!kinds.includes("MutatingWebhookConfiguration"));
    assert.ok(kinds.indexOf("MutatingAdmissionPolicyBinding") < kinds.indexOf("Deployment"), kinds.join(" "));
  });

  it("by default (auto) stands beside the mutating webhook, served and injected as before, not in a static manifest", () => {
    const settings = settingsFor();
    assert.equal(settings.webhooks.defaults, "auto");
    assert.ok(namespaceDefaultsPolicy(settings), "my-app-operator.ts installs it where the cluster serves it");
    assert.ok(operatorWebhookConfigurations(settings)?.mutating);
    assert.ok(!operatorFlags(settings).some((flag) => flag.startsWith("--webhook-defaults")));
    const resources = operatorRbac(settings).clusterRole.rules?.flatMap((rule) => rule.resources ?? []);
    assert.ok(resources?.includes("mutatingwebhookconfigurations"));
    // `kubectl apply -f` cannot look at the cluster first: the webhook alone, which every version serves.
    const kinds = installManifests(settings, loadCrdManifest()).map((manifest) => manifest.kind);
    assert.ok(kinds.includes("MutatingWebhookConfiguration"));
    assert.ok(!kinds.includes("MutatingAdmissionPolicy"), kinds.join(" "));
  });

  it("is left out when the platform asks for the webhook alone", () => {
    const settings = settingsFor({ webhooks: { defaults: "webhook" } });
    assert.equal(namespaceDefaultsPolicy(settings), undefined);
    assert.ok(operatorWebhookConfigurations(settings)?.mutating);
  });
});
