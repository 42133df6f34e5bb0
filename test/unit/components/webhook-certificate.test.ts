import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadCrdManifest } from "../../../components/crd.ts";
import { installManifests } from "../../../components/install-manifests.ts";
import { operatorFlags } from "../../../components/operator-flags.ts";
import { operatorRbac } from "../../../components/rbac-objects.ts";
import { resolveSettings } from "../../../components/settings.ts";
import { webhookCertificate } from "../../../components/webhook-certificate.ts";
import { settingsFor, testImage } from "./settings-fixture.ts";

const issuesOf = (args: Parameters<typeof resolveSettings>[1]) => {
  const result = resolveSettings("op", args);
  return result.ok ? [] : result.issues.map((issue) => `${issue.field}: ${issue.message}`);
};

describe("webhooks.certManager", () => {
  it("declares a cert-manager Certificate for the Secret the operator then only reads", () => {
    const settings = settingsFor({ webhooks: { certManager: { issuer: "platform-ca", kind: "ClusterIssuer" } } });
    const certificate = webhookCertificate(settings);
    assert.ok(certificate);
    assert.equal(certificate.metadata.name, "myapp-operator-webhook-cert");
    assert.equal(certificate.metadata.namespace, "myapp-system");
    assert.equal(certificate.spec.secretName, "myapp-operator-webhook-cert");
    assert.deepEqual(certificate.spec.dnsNames, [
      "myapp-operator-webhook.myapp-system.svc",
      "myapp-operator-webhook.myapp-system.svc.cluster.local",
    ]);
    assert.deepEqual(certificate.spec.issuerRef, {
      name: "platform-ca",
      kind: "ClusterIssuer",
      group: "cert-manager.io",
    });
    assert.ok(operatorFlags(settings).includes("--webhook-cert-issuer=external"));
    // Reading that one Secret is all the operator may do with Secrets.
    const secretRules = [operatorRbac(settings).webhookCertificate?.role.rules ?? []]
      .flat()
      .filter((rule) => rule.resources?.includes("secrets"));
    assert.deepEqual(secretRules, [
      { apiGroups: [""], resources: ["secrets"], resourceNames: ["myapp-operator-webhook-cert"], verbs: ["get"] },
    ]);
    const kinds = installManifests(settings, loadCrdManifest()).map((manifest) => manifest.kind);
    assert.ok(kinds.indexOf("Certificate") < kinds.indexOf("Deployment"), kinds.join(" "));
  });

  it("names the IP of an external operator's URL as an IP address", () => {
    const settings = settingsFor({
      operatorPlacement: "external",
      webhooks: { url: "https://127.0.0.1:9443", certManager: { issuer: "local-ca" } },
    });
    const certificate = webhookCertificate(settings);
    assert.deepEqual(certificate?.spec.ipAddresses, ["127.0.0.1"]);
    assert.equal(certificate?.spec.dnsNames, undefined);
    assert.equal(certificate?.spec.issuerRef.kind, "Issuer");
  });

  it("is left out by default, and refuses an issuer it cannot name or webhooks that are off", () => {
    assert.equal(webhookCertificate(settingsFor()), undefined);
    assert.ok(!operatorFlags(settingsFor()).some((flag) => flag.startsWith("--webhook-cert-issuer")));
    assert.match(
      issuesOf({ image: testImage, webhooks: { certManager: { issuer: "Platform CA" } } })[0] ?? "",
      /^webhooks\.certManager\.issuer: must be the name of a cert-manager issuer \(at most 253 lower-case letters, digits, '-' and '\.', starting and ending with a letter or digit\), got "Platform CA"/,
    );
    // Dots only between labels, as the apiserver holds a name to.
    assert.match(
      issuesOf({ image: testImage, webhooks: { certManager: { issuer: "ca..platform" } } })[0] ?? "",
      /^webhooks\.certManager\.issuer: must be the name of a cert-manager issuer/,
    );
    assert.match(
      issuesOf({ image: testImage, webhooks: { certManager: { issuer: "ca", kind: "Vault" as "Issuer" } } })[0] ?? "",
      /^webhooks\.certManager\.kind: must be "Issuer" or "ClusterIssuer"/,
    );
    assert.match(
      issuesOf({ image: testImage, webhooks: { enabled: false, certManager: { issuer: "ca" } } })[0] ?? "",
      /^webhooks\.certManager: issues the webhooks' certificate, which are off/,
    );
  });
});
