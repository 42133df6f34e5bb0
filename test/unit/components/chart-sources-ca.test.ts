/**
 * The platform's private CAs for chart sources (`chartSourcesCa`): checked as CA certificates, naming the field;
 * in the cluster a ConfigMap before the Deployment, mounted into the operator's pod as NODE_EXTRA_CA_CERTS, its
 * digest on the pod template so a changed bundle rolls the pods; nothing for an external operator.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chartSourcesCaDigestAnnotation } from "../../../components/chart-sources-ca.ts";
import { loadCrdManifest } from "../../../components/crd.ts";
import { operatorDeployment } from "../../../components/deployment.ts";
import { installManifests } from "../../../components/install-manifests.ts";
import { resolveSettings, type MyAppOperatorArgs } from "../../../components/settings.ts";
import { createCertificateAuthority, createServingCertificate } from "../../../operator/admission/certificates.ts";

const nowMs = Date.now();
const ca = await createCertificateAuthority({ validityMs: 3_600_000, nowMs, commonName: "charts-ca" });
const other = await createCertificateAuthority({ validityMs: 3_600_000, nowMs, commonName: "other-ca" });
const leaf = await createServingCertificate({ ca, hosts: ["charts.example.com"], validityMs: 3_600_000, nowMs });
const image = "registry.example.com/myapp-operator:1.0.0";
const crd = loadCrdManifest();

function settingsOf(args: MyAppOperatorArgs) {
  const resolved = resolveSettings("op", { ...(args.operatorPlacement === "external" ? {} : { image }), ...args });
  assert.ok(resolved.ok, JSON.stringify(!resolved.ok && resolved.issues));
  return resolved.settings;
}

function issuesOf(args: MyAppOperatorArgs) {
  const resolved = resolveSettings("op", { image, ...args });
  return resolved.ok ? [] : resolved.issues;
}

describe("chartSourcesCa", () => {
  it("in the cluster: a ConfigMap before the Deployment, mounted as NODE_EXTRA_CA_CERTS, its digest on the pods", () => {
    const settings = settingsOf({ chartSourcesCa: `${ca.cert}${other.cert}` });
    const manifests = installManifests(settings, crd);
    const kinds = manifests.map((manifest) => manifest.kind);
    const configMap = manifests.find((manifest) => manifest.kind === "ConfigMap") as {
      metadata: { name: string; namespace: string };
      data: Record<string, string>;
    };
    assert.deepEqual(configMap.metadata, {
      ...configMap.metadata,
      name: "op-chart-sources-ca",
      namespace: "myapp-system",
    });
    assert.equal(configMap.data["ca.crt"], `${ca.cert}${other.cert}`);
    assert.ok(kinds.indexOf("ConfigMap") < kinds.indexOf("Deployment"), kinds.join(" "));

    const pod = operatorDeployment(settings)?.spec?.template;
    const container = pod?.spec?.containers[0];
    assert.deepEqual(
      container?.env?.find((variable) => variable.name === "NODE_EXTRA_CA_CERTS"),
      { name: "NODE_EXTRA_CA_CERTS", value: "/etc/myapp/chart-sources-ca/ca.crt" },
    );
    assert.deepEqual(container?.volumeMounts?.at(-1), {
      name: "chart-sources-ca",
      mountPath: "/etc/myapp/chart-sources-ca",
      readOnly: true,
    });
    assert.deepEqual(pod?.spec?.volumes?.at(-1), {
      name: "chart-sources-ca",
      configMap: { name: "op-chart-sources-ca" },
    });
    // Another bundle, other pods: Node reads the file once, at start.
    const digest = (pem: string) =>
      operatorDeployment(settingsOf({ chartSourcesCa: pem }))?.spec?.template?.metadata?.annotations?.[
        chartSourcesCaDigestAnnotation
      ];
    assert.match(digest(ca.cert) ?? "", /^[0-9a-f]{16}$/);
    assert.notEqual(digest(ca.cert), digest(other.cert));
  });

  it("without one, or for an external operator, nothing of it", () => {
    const plain = installManifests(settingsOf({}), crd);
    assert.equal(
      plain.some((manifest) => manifest.kind === "ConfigMap"),
      false,
    );
    assert.equal(JSON.stringify(plain).includes("NODE_EXTRA_CA_CERTS"), false);
    assert.equal(installManifests(settingsOf({ chartSourcesCa: "" }), crd).length, plain.length, "empty is not given");
    const external = installManifests(settingsOf({ operatorPlacement: "external", chartSourcesCa: ca.cert }), crd);
    assert.equal(
      external.some((manifest) => manifest.kind === "ConfigMap" || manifest.kind === "Deployment"),
      false,
    );
  });

  it("refuses what is not a bundle of CA certificates, naming the field", () => {
    assert.deepEqual(issuesOf({ chartSourcesCa: "ca.pem" }), [
      {
        field: "chartSourcesCa",
        message: "holds no PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)",
      },
    ]);
    const [notCa] = issuesOf({ chartSourcesCa: `${ca.cert}${leaf.cert}` });
    assert.equal(notCa?.field, "chartSourcesCa");
    assert.match(notCa?.message ?? "", /^certificate 2 of 2 \(CN=charts\.example\.com\) is not a CA certificate$/);
    const broken = ca.cert.replace(/\n[A-Za-z0-9+/]{8}/, "\n!!!!!!!!");
    assert.match(issuesOf({ chartSourcesCa: broken })[0]?.message ?? "", /^certificate 1 of 1 cannot be read: /);
  });
});
