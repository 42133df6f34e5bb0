/**
 * `webhooks.certManager` against the real apiserver with cert-manager's own Certificate CRD (from its Go module at
 * a pinned version, the way the toolchain gets its sources): the component's Certificate is accepted by that schema;
 * then the test does what cert-manager's controller does (its binaries are nested Go modules the module proxy does
 * not serve, so it cannot be built here): it issues a certificate for the Certificate's names from a CA into its
 * Secret. The operator's webhook side, configured by the flags the component derives, serves that certificate and
 * injects the CA into the component's ValidatingWebhookConfiguration, and the apiserver's call for an instance with
 * a volume is admitted over TLS.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { pino } from "pino";
import { parse } from "yaml";
import { apiVersion, kind } from "../../api/index.ts";
import { operatorFlags } from "../../components/operator-flags.ts";
import { resolveSettings } from "../../components/settings.ts";
import { webhookCertificate } from "../../components/webhook-certificate.ts";
import { operatorWebhookConfigurations } from "../../components/webhooks.ts";
import type { KubeObject } from "../../kube/index.ts";
import { applyRotation } from "../../operator/admission/certificate-store.ts";
import { startAdmissionTls } from "../../operator/admission/serving.ts";
import { parseOptions } from "../../operator/options.ts";
import { freePort } from "../../tools/lib/operator-launcher.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { ensureCrd } from "../support/operator.ts";

const client = adminClient();
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "error" });
const certManagerModule = "github.com/cert-manager/cert-manager@v1.21.2";

/** cert-manager's Certificate CRD, from its module in the Go module cache (downloaded when missing). */
async function certificateCrd(): Promise<KubeObject> {
  const { stdout } = await promisify(execFile)("go", ["mod", "download", "-json", certManagerModule], {
    cwd: tmpdir(),
    env: { ...process.env, GOFLAGS: "-mod=mod", GO111MODULE: "on" },
    maxBuffer: 1 << 20,
  });
  const { Dir } = JSON.parse(stdout) as { Dir: string };
  return parse(readFileSync(path.join(Dir, "deploy/crds/cert-manager.io_certificates.yaml"), "utf8")) as KubeObject;
}

type Certificate = KubeObject & { spec: { secretName: string; dnsNames?: string[]; ipAddresses?: string[] } };

test("cert-manager's Certificate schema takes the component's Certificate, and the operator serves what it issues", async (t) => {
  await ensureCrd(client);
  // GIVEN cert-manager's Certificate CRD (removed afterwards with every Certificate)
  const crd = await certificateCrd();
  const crdName = crd.metadata.name ?? "";
  if (!(await client.find("apiextensions.k8s.io/v1", "CustomResourceDefinition", crdName))) {
    await client.apply(crd, { fieldManager: "myapp-test", force: true });
    t.after(() => client.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", crdName).catch(() => undefined));
  }
  await waitFor("cert-manager's Certificate CRD to be served", async () => {
    const live = await client.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
      "apiextensions.k8s.io/v1",
      "CustomResourceDefinition",
      crdName,
    );
    return live.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") || undefined;
  });

  // AND the platform's settings: an external operator whose webhook certificate cert-manager issues
  const system = await testNamespace(t, client, "certmgr-sys");
  const apps = await testNamespace(t, client, "certmgr-apps");
  const name = `certmgr-${randomBytes(3).toString("hex")}`;
  const resolved = resolveSettings(name, {
    namespace: system,
    createNamespace: false,
    operatorPlacement: "external",
    watchNamespaces: [apps],
    webhooks: { url: `https://127.0.0.1:${await freePort()}`, certManager: { issuer: "platform-ca" } },
  });
  assert.ok(resolved.ok, JSON.stringify(resolved));
  const { settings } = resolved;

  // WHEN the component's Certificate is created: cert-manager's schema accepts it
  const manifest = webhookCertificate(settings);
  assert.ok(manifest);
  const created = await client.post<Certificate>(
    `/apis/cert-manager.io/v1/namespaces/${system}/certificates`,
    manifest,
  );
  assert.deepEqual(created.spec.ipAddresses, ["127.0.0.1"]);

  // AND the issuer does its part: a certificate for the Certificate's names, from a CA, in its Secret
  const hosts = [...(created.spec.ipAddresses ?? []), ...(created.spec.dnsNames ?? [])];
  const issued = await applyRotation({ kind: "issue-all", reason: "test" }, undefined, {
    hosts,
    certValidityMs: 3_600_000,
    caValidityMs: 36_000_000,
    nowMs: Date.now(),
  });
  const data = { "tls.crt": issued.servingCert, "tls.key": issued.servingKey, "ca.crt": issued.caBundle };
  await client.create({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: created.spec.secretName, namespace: system },
    type: "kubernetes.io/tls",
    data: Object.fromEntries(Object.entries(data).map(([key, pem]) => [key, Buffer.from(pem).toString("base64")])),
  } as KubeObject);

  // AND the operator's webhook side runs with the flags the component derives, behind its configuration
  const configurations = operatorWebhookConfigurations(settings);
  assert.ok(configurations);
  t.after(() =>
    client.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", name).catch(() => undefined),
  );
  await client.apply(configurations.validating as KubeObject, { fieldManager: "myapp-test", force: true });
  const options = parseOptions(
    operatorFlags(settings).filter((flag) => flag.startsWith("--webhook-")),
    { POD_NAMESPACE: system },
  );
  assert.equal(options.webhook?.certIssuer, "external");
  let calls = 0;
  const tls = await startAdmissionTls({
    client,
    logger,
    webhook: options.webhook!,
    routes: {
      "/validate": async (body: unknown) => {
        calls++;
        const uid = (body as { request?: { uid?: string } }).request?.uid;
        return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid, allowed: true } };
      },
    },
    propagationMs: 1_000,
  });
  t.after(() => tls.close());

  // THEN the CA is injected, and an instance with a volume (judged by the webhook) is admitted over TLS
  await waitFor("the issuer's CA injected", async () => {
    const live = await client.get<KubeObject & { webhooks: { clientConfig: { caBundle?: string } }[] }>(
      "admissionregistration.k8s.io/v1",
      "ValidatingWebhookConfiguration",
      name,
    );
    return live.webhooks.every((w) => w.clientConfig.caBundle === Buffer.from(issued.caBundle).toString("base64"))
      ? true
      : undefined;
  });
  await waitFor(
    "an instance with a volume admitted by the webhook",
    async () => {
      try {
        return await client.create(
          {
            apiVersion,
            kind,
            metadata: { name: "db", namespace: apps },
            spec: { image: "postgres:17", storage: "1Gi" },
          },
          { dryRun: true },
        );
      } catch (error) {
        // The apiserver picks the injected bundle up from its informer a moment later.
        if (/failed calling webhook/.test(String(error))) return undefined;
        throw error;
      }
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  assert.ok(calls > 0, "the apiserver called the webhook");
  const secret = await client.get<KubeObject>("v1", "Secret", created.spec.secretName, system);
  assert.equal(secret.metadata.managedFields?.length, 1, "nobody but the issuer wrote the Secret");
});
