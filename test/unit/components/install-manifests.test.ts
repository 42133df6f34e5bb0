import assert from "node:assert/strict";
import { defaultChartKinds } from "../../../api/index.ts";
import { chartKindRules } from "../../../components/chart-kinds.ts";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { crdName } from "../../../api/index.ts";
import { loadCrdManifest } from "../../../components/crd.ts";
import { installManifests, renderInstallYaml } from "../../../components/install-manifests.ts";
import { clusterWideRules, secureMetricsRules } from "../../../components/rbac-rules.ts";
import { defaultInstallPath, renderDefaultInstall } from "../../../components/render-install.ts";
import { policyRules } from "../../../components/rbac-objects.ts";
import { webhookClusterRules } from "../../../components/webhooks.ts";
import { settingsFor } from "./settings-fixture.ts";

const kindsOf = (manifests: readonly { kind?: string }[]) => manifests.map((manifest) => manifest.kind);

describe("installManifests", () => {
  it("lists the CRD and namespace first and workloads last, in apply order", () => {
    const manifests = installManifests(settingsFor({ replicas: 2, watchNamespaces: ["team-a"] }), loadCrdManifest());
    assert.deepEqual(kindsOf(manifests), [
      "CustomResourceDefinition",
      "Namespace",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "Role",
      "RoleBinding",
      "Role",
      "RoleBinding",
      "Role",
      "RoleBinding",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "Deployment",
      "Service",
      "PodDisruptionBudget",
      "Service",
      "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration",
    ]);
  });

  it("external placement: CRD, namespace, ServiceAccount and RBAC, no workload", () => {
    const manifests = installManifests(settingsFor({ operatorPlacement: "external" }), loadCrdManifest());
    assert.deepEqual(kindsOf(manifests), [
      "CustomResourceDefinition",
      "Namespace",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterRole",
      "ClusterRole",
      "Role",
      "RoleBinding",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
    ]);
    // Without the default roles' aggregation, the platform grants instance rights itself
    const own = installManifests(settingsFor({ operatorPlacement: "external", tenantRoles: false }), loadCrdManifest());
    assert.equal(kindsOf(own).filter((kind) => kind === "ClusterRole").length, 1);
  });
});

describe("dist/install.yaml", () => {
  it("is up to date with the builders and the generated CRD (run 'node components/render-install.ts')", () => {
    assert.equal(readFileSync(defaultInstallPath, "utf8"), renderDefaultInstall());
  });

  it("holds the CRD from config/crd unchanged and the shared RBAC rules", () => {
    type Document = { kind: string; rules?: unknown };
    const documents = parseAllDocuments(renderDefaultInstall()).map((document) => document.toJS() as Document);
    assert.deepEqual(documents[0], loadCrdManifest());
    const clusterRole = documents.find((d) => d.kind === "ClusterRole");
    assert.deepEqual(
      clusterRole?.rules,
      policyRules([
        ...clusterWideRules(),
        ...chartKindRules(defaultChartKinds),
        ...secureMetricsRules,
        ...webhookClusterRules("myapp-operator", [], "webhook"),
      ]),
    );
    // A scraper bound to the metrics reader may `get /metrics`, and nothing else.
    const reader = documents.find((d) => d.kind === "ClusterRole" && d !== clusterRole);
    assert.deepEqual(reader?.rules, [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }]);
    assert.ok(!documents.some((d) => d.kind === "Secret"), "no Secret objects");
  });

  it("renders one YAML document per object, after a header", () => {
    const text = renderInstallYaml([loadCrdManifest()]);
    assert.ok(text.startsWith("# MyAppInstance platform"));
    const documents = parseAllDocuments(text);
    assert.equal(documents.length, 1);
    assert.equal((documents[0]?.toJS() as { metadata: { name: string } }).metadata.name, crdName);
  });
});
