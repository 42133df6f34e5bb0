/**
 * The webhook's certificates against the real apiserver: two replicas racing to create the Secret end up with one
 * and serve the same certificate; the caBundle is injected into a Validating- and a MutatingWebhookConfiguration;
 * and while the serving certificate AND the CA rotate (twice each, with lifetimes of seconds), the apiserver keeps
 * calling the webhook over TLS for a loop of MyAppInstance creates, and none fails (failurePolicy Fail: a TLS
 * failure would refuse the create).
 *
 * The webhooks match only the test's namespace (namespaceSelector) and are deleted first when the test ends, so a
 * failure cannot leave a Fail-policy webhook in the way of other tests. Needs KUBECONFIG pointing at the local cluster.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { connect } from "node:tls";
import { test } from "node:test";
import { pino } from "pino";
import { apiVersion, kind } from "../../api/index.ts";
import { ConflictError, type KubeObject } from "../../kube/index.ts";
import {
  applyRotation,
  CertificateStore,
  kubeCertificateSecretClient,
  type CertificateSecretClient,
} from "../../operator/admission/certificate-store.ts";
import { CaInjector, kubeWebhookConfigurationClient } from "../../operator/admission/ca-injection.ts";
import { fingerprintOf, splitPemBundle, type CertificatePair } from "../../operator/admission/certificates.ts";
import { startAdmissionTls } from "../../operator/admission/serving.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { ensureCrd } from "../support/operator.ts";

const client = adminClient();
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "error" });
const admissionApi = "admissionregistration.k8s.io/v1";
const webhookKinds = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] as const;

type Secret = KubeObject & { data?: Record<string, string> };
type WebhookConfiguration = KubeObject & { webhooks: { name: string; clientConfig: { caBundle?: string } }[] };

test("two replicas racing to create the certificate Secret create one and serve the same certificate", async (t) => {
  const namespace = await testNamespace(t, client, "adm-cert");
  const name = "webhook-cert";
  // GIVEN two stores whose first reads both find no Secret (a barrier holds each read until both have read)
  let reads = 0;
  let releaseReads: () => void = () => undefined;
  const bothRead = new Promise<void>((resolve) => (releaseReads = resolve));
  const outcomes: string[] = [];
  const racingClient = (): CertificateSecretClient => {
    const secrets = kubeCertificateSecretClient(client, namespace, name);
    let first = true;
    return {
      async get() {
        const found = await secrets.get();
        if (first) {
          first = false;
          if (++reads === 2) releaseReads();
          await bothRead;
        }
        return found;
      },
      async create(certificates) {
        try {
          const created = await secrets.create(certificates);
          outcomes.push("created");
          return created;
        } catch (error) {
          outcomes.push(error instanceof ConflictError ? "conflict" : "failed");
          throw error;
        }
      },
      update: (certificates, resourceVersion) => secrets.update(certificates, resourceVersion),
    };
  };
  const served: CertificatePair[][] = [[], []];
  const stores = served.map(
    (pairs) =>
      new CertificateStore({
        secret: racingClient(),
        injector: new CaInjector(kubeWebhookConfigurationClient(client, `absent-${namespace}`), "absent", logger),
        hosts: ["localhost", "127.0.0.1"],
        certValidityMs: 3_600_000,
        onServing: (pair) => pairs.push(pair),
        logger,
      }),
  );

  // WHEN both load
  await Promise.all(stores.map((store) => store.load()));

  // THEN exactly one create succeeded, the other got 409, and both serve the Secret's certificate
  assert.deepEqual(outcomes.sort(), ["conflict", "created"]);
  const secret = await client.get<Secret & { type?: string }>("v1", "Secret", name, namespace);
  assert.equal(secret.type, "kubernetes.io/tls");
  const servingCert = Buffer.from(secret.data?.["tls.crt"] ?? "", "base64").toString("utf8");
  assert.deepEqual(
    served.map((pairs) => pairs.map((pair) => pair.cert)),
    [[servingCert], [servingCert]],
  );
  // AND a further check by each writes nothing
  const version = secret.metadata.resourceVersion;
  for (const store of stores) await store.check();
  assert.equal((await client.get<Secret>("v1", "Secret", name, namespace)).metadata.resourceVersion, version);
  // AND an update at a resourceVersion that has moved on is the apiserver's 409, which the store re-reads on
  const secrets = kubeCertificateSecretClient(client, namespace, name);
  const current = (await secrets.get())!;
  const renewed = await applyRotation({ kind: "renew-serving", reason: "test" }, current.certificates, {
    hosts: ["localhost", "127.0.0.1"],
    certValidityMs: 3_600_000,
    caValidityMs: 36_000_000,
    nowMs: Date.now(),
  });
  const moved = await secrets.update(renewed, current.resourceVersion);
  assert.notEqual(moved.resourceVersion, current.resourceVersion);
  await assert.rejects(secrets.update(current.certificates, current.resourceVersion), ConflictError);
});

test("the apiserver calls the webhook over TLS with the injected caBundle, and rotations lose no create", async (t) => {
  // The webhook configurations go first of all in cleanup: nothing may outlive the test with failurePolicy Fail.
  const configuration = `myapp-adm-cert-${randomBytes(3).toString("hex")}`;
  t.after(async () => {
    for (const webhookKind of webhookKinds) {
      await client.delete(admissionApi, webhookKind, configuration).catch(() => undefined);
    }
  });
  await ensureCrd(client);
  const namespace = await testNamespace(t, client, "adm-cert");

  // GIVEN the webhook's TLS side with lifetimes of seconds (serving 12 s, CA 24 s: each rotates at two thirds),
  // and allow-all handlers that count the apiserver's calls
  const calls = { "/validate": 0, "/mutate": 0 };
  const allow = (path: keyof typeof calls) => async (body: unknown) => {
    calls[path]++;
    const uid = (body as { request?: { uid?: string } }).request?.uid;
    return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid, allowed: true } };
  };
  const tls = await startAdmissionTls({
    client,
    logger,
    webhook: {
      address: { host: "127.0.0.1", port: 0 },
      certSecret: { namespace, name: "webhook-cert" },
      configuration,
      hosts: ["localhost", "127.0.0.1"],
      certValidityMs: 12_000,
      defaults: "webhook",
      certIssuer: "operator",
    },
    routes: { "/validate": allow("/validate"), "/mutate": allow("/mutate") },
    caValidityMs: 24_000,
    propagationMs: 2_000,
    checkIntervalMs: 500,
  });
  t.after(() => tls.close());

  // AND the two configurations, created only now (the port is known now), without a caBundle, for this namespace
  const webhook = (path: string, name: string) => testWebhook(name, `https://127.0.0.1:${tls.port}${path}`, namespace);
  await client.create({
    apiVersion: admissionApi,
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: configuration },
    webhooks: [webhook("/validate", "validate.myapp.example.com")],
  } as KubeObject);
  await client.create({
    apiVersion: admissionApi,
    kind: "MutatingWebhookConfiguration",
    metadata: { name: configuration },
    webhooks: [webhook("/mutate", "mutate.myapp.example.com")],
  } as KubeObject);

  // THEN the next check injects the Secret's bundle into both
  const bundleNow = async () =>
    Buffer.from((await client.get<Secret>("v1", "Secret", "webhook-cert", namespace)).data?.["ca.crt"] ?? "", "base64");
  await waitFor("the caBundle injected into both configurations", async () => {
    const expected = (await bundleNow()).toString("base64");
    for (const webhookKind of webhookKinds) {
      const live = await client.get<WebhookConfiguration>(admissionApi, webhookKind, configuration);
      if (live.webhooks[0]?.clientConfig.caBundle !== expected) return undefined;
    }
    return true;
  });
  await untilTheApiserverTrustsTheWebhook(namespace);

  // WHEN instances are created back to back through two rotations of the CA and more of the certificate (~45 s;
  // the deadline leaves a busy machine room);
  // after each, a new TLS connection must verify against the caBundle the configuration holds at that moment (one
  // apiserver keeps its connection to the webhook alive, so its own handshakes happen only when the bundle changes;
  // HA apiservers and new connections may handshake at any time)
  const failures: string[] = [];
  const cas = new Set<string>();
  const presented = new Set<string>();
  let created = 0;
  const until = Date.now() + 180_000;
  while ((cas.size < 3 || presented.size < 4) && Date.now() < until) {
    const name = `i-${created}`;
    try {
      await client.create({ apiVersion, kind, metadata: { name, namespace }, spec: { image: "nginx:1.27" } });
    } catch (error) {
      failures.push(`create ${name}: ${(error as Error).message}`);
    }
    created++;
    const live = await client.get<WebhookConfiguration>(admissionApi, "ValidatingWebhookConfiguration", configuration);
    const trusted = Buffer.from(live.webhooks[0]?.clientConfig.caBundle ?? "", "base64").toString("utf8");
    cas.add(fingerprintOf(splitPemBundle(trusted)[0]!));
    try {
      presented.add(await presentedFingerprint(tls.port, trusted));
    } catch (error) {
      failures.push(`handshake after ${name}: ${(error as Error).message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  // THEN none failed, the apiserver called both webhooks for them, and the CA and certificate did change
  assert.deepEqual(failures, []);
  assert.ok(
    calls["/validate"] >= created && calls["/mutate"] >= created,
    `calls ${JSON.stringify(calls)}, creates ${created}`,
  );
  assert.ok(cas.size >= 3, `the injected CA rotated at least twice (saw ${cas.size} CAs)`);
  assert.ok(presented.size >= 4, `the server presented at least 4 certificates (saw ${presented.size})`);
});

test("a webhook added to the configuration gets the caBundle as it appears, not at the next check", async (t) => {
  const configuration = `myapp-adm-add-${randomBytes(3).toString("hex")}`;
  t.after(() => client.delete(admissionApi, "ValidatingWebhookConfiguration", configuration).catch(() => undefined));
  await ensureCrd(client);
  const namespace = await testNamespace(t, client, "adm-add");
  const allow = async (body: unknown) => ({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid: (body as { request?: { uid?: string } }).request?.uid, allowed: true },
  });
  // GIVEN the webhook's TLS side checking only once an hour, so a prompt injection can only come from the watch
  const tls = await startAdmissionTls({
    client,
    logger,
    webhook: {
      address: { host: "127.0.0.1", port: 0 },
      certSecret: { namespace, name: "webhook-cert" },
      configuration,
      hosts: ["localhost", "127.0.0.1"],
      certValidityMs: 24 * 3_600_000,
      defaults: "policy",
      certIssuer: "operator",
    },
    routes: { "/validate": allow },
    checkIntervalMs: 3_600_000,
  });
  t.after(() => tls.close());
  const url = `https://127.0.0.1:${tls.port}/validate`;
  const bundle = async () =>
    (await client.get<Secret>("v1", "Secret", "webhook-cert", namespace)).data?.["ca.crt"] ?? "missing";
  const injected = (names: string[]) => async () => {
    const live = await client.get<WebhookConfiguration>(admissionApi, "ValidatingWebhookConfiguration", configuration);
    const expected = await bundle();
    return names.every((name) => live.webhooks.find((w) => w.name === name)?.clientConfig.caBundle === expected)
      ? true
      : undefined;
  };

  // WHEN the configuration is created, then given a second webhook, as a `pulumi up` of the platform does
  await client.create({
    apiVersion: admissionApi,
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: configuration },
    webhooks: [testWebhook("validate.myapp.example.com", url, namespace)],
  } as KubeObject);
  await waitFor("the caBundle in the new configuration", injected(["validate.myapp.example.com"]));
  const live = await client.get<WebhookConfiguration>(admissionApi, "ValidatingWebhookConfiguration", configuration);
  await client.replace({
    ...live,
    webhooks: [...live.webhooks, testWebhook("budget.myapp.example.com", url, namespace)],
  } as KubeObject);

  // THEN the new webhook has the bundle too, within moments (the check's interval is an hour)
  await waitFor(
    "the caBundle in the added webhook",
    injected(["validate.myapp.example.com", "budget.myapp.example.com"]),
  );
  await untilTheApiserverTrustsTheWebhook(namespace);
});

/**
 * Waits until a (dry-run) create passes the webhook. The stored configuration holding the caBundle is not yet the
 * apiserver using it: its admission plugin reads configurations through an informer of its own, which on a busy
 * machine can lag the write by a moment, and a create sent in that moment fails with "unknown authority".
 */
async function untilTheApiserverTrustsTheWebhook(namespace: string): Promise<void> {
  await waitFor("the apiserver to call the webhook with the injected caBundle", async () => {
    try {
      await client.create(
        { apiVersion, kind, metadata: { name: "trust-probe", namespace }, spec: { image: "nginx:1.27" } },
        { dryRun: true },
      );
      return true;
    } catch (error) {
      if (String(error).includes("failed calling webhook")) return undefined;
      throw error;
    }
  });
}

/** A failurePolicy Fail webhook at `url` for creates and updates of instances in `namespace` only. */
function testWebhook(name: string, url: string, namespace: string) {
  return {
    name,
    clientConfig: { url },
    rules: [
      {
        apiGroups: ["example.com"],
        apiVersions: ["v1"],
        operations: ["CREATE", "UPDATE"],
        resources: ["myappinstances"],
        scope: "Namespaced",
      },
    ],
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
    failurePolicy: "Fail",
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    timeoutSeconds: 5,
  };
}

/** The fingerprint of the certificate a new TLS connection is offered; rejects unless it verifies against `ca`. */
function presentedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ca }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? "");
      socket.end();
    });
    socket.on("error", reject);
  });
}

test("a certificate another issuer keeps (as cert-manager does) is served, its CA injected, and its renewals lose no create", async (t) => {
  const configuration = `myapp-adm-ext-${randomBytes(3).toString("hex")}`;
  t.after(() => client.delete(admissionApi, "ValidatingWebhookConfiguration", configuration).catch(() => undefined));
  await ensureCrd(client);
  const namespace = await testNamespace(t, client, "adm-ext");
  const hosts = ["localhost", "127.0.0.1"];
  const lifetimes = { hosts, certValidityMs: 3_600_000, caValidityMs: 36_000_000 };

  // GIVEN the issuer's Secret as cert-manager's CA issuer writes it: tls.crt, tls.key and ca.crt, no CA key
  let issued = await applyRotation({ kind: "issue-all", reason: "test" }, undefined, {
    ...lifetimes,
    nowMs: Date.now(),
  });
  let issuerVersion = "";
  const issue = async () => {
    const data = { "tls.crt": issued.servingCert, "tls.key": issued.servingKey, "ca.crt": issued.caBundle };
    const secret = await client.apply<Secret>(
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "webhook-cert", namespace },
        type: "kubernetes.io/tls",
        data: Object.fromEntries(Object.entries(data).map(([key, pem]) => [key, Buffer.from(pem).toString("base64")])),
      } as KubeObject,
      { fieldManager: "cert-manager", force: true },
    );
    issuerVersion = secret.metadata.resourceVersion ?? "";
  };
  await issue();
  const calls = { count: 0 };
  const tls = await startAdmissionTls({
    client,
    logger,
    webhook: {
      address: { host: "127.0.0.1", port: 0 },
      certSecret: { namespace, name: "webhook-cert" },
      configuration,
      hosts,
      certValidityMs: 3_600_000,
      defaults: "policy",
      certIssuer: "external",
    },
    routes: {
      "/validate": async (body: unknown) => {
        calls.count++;
        const uid = (body as { request?: { uid?: string } }).request?.uid;
        return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid, allowed: true } };
      },
    },
    propagationMs: 2_000,
    checkIntervalMs: 500,
  });
  t.after(() => tls.close());
  await client.create({
    apiVersion: admissionApi,
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: configuration },
    webhooks: [testWebhook("validate.myapp.example.com", `https://127.0.0.1:${tls.port}/validate`, namespace)],
  } as KubeObject);
  const injected = async () => {
    const live = await client.get<WebhookConfiguration>(admissionApi, "ValidatingWebhookConfiguration", configuration);
    return Buffer.from(live.webhooks[0]?.clientConfig.caBundle ?? "", "base64").toString("utf8");
  };
  await waitFor("the issuer's CA injected", async () => ((await injected()) === issued.caBundle ? true : undefined));
  await untilTheApiserverTrustsTheWebhook(namespace);

  // WHEN instances are created back to back while the issuer renews the certificate, then moves to a new CA. Each
  // certificate is kept for its time (5 s, 7 s, then 13 s) and until creates went on for a while after the server
  // was seen presenting it: a busy machine may pick a renewal up late, and the next must not overtake it.
  const failures: string[] = [];
  const presented = new Set<string>();
  let created = 0;
  const firstCa = issued;
  const stages = [
    {
      lastsMs: 5_000,
      next: () =>
        applyRotation({ kind: "renew-serving", reason: "test" }, firstCa, { ...lifetimes, nowMs: Date.now() }),
    },
    {
      lastsMs: 7_000,
      next: () => applyRotation({ kind: "issue-all", reason: "test" }, undefined, { ...lifetimes, nowMs: Date.now() }),
    },
    { lastsMs: 13_000, next: undefined },
  ];
  const deadline = Date.now() + 180_000;
  for (const stage of stages) {
    const started = Date.now();
    const current = fingerprintOf(issued.servingCert);
    let createsWhileServed = 0;
    while ((Date.now() - started < stage.lastsMs || createsWhileServed < 10) && Date.now() < deadline) {
      const name = `i-${created}`;
      try {
        await client.create({ apiVersion, kind, metadata: { name, namespace }, spec: { image: "nginx:1.27" } });
      } catch (error) {
        failures.push(`create ${name}: ${(error as Error).message}`);
      }
      created++;
      if (presented.has(current)) createsWhileServed++;
      try {
        presented.add(await presentedFingerprint(tls.port, await injected()));
      } catch (error) {
        failures.push(`handshake after ${name}: ${(error as Error).message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (stage.next) {
      issued = await stage.next();
      await issue();
    }
  }

  // THEN none failed, every create was judged by the webhook, all three certificates were served, the new CA
  // was injected beside the old one, and the operator never wrote the issuer's Secret
  assert.deepEqual(failures, []);
  assert.ok(calls.count >= created, `calls ${calls.count}, creates ${created}`);
  assert.equal(presented.size, 3, `the server presented the three certificates (saw ${presented.size})`);
  assert.deepEqual(
    splitPemBundle(await injected()).map(fingerprintOf),
    [...splitPemBundle(firstCa.caBundle), ...splitPemBundle(issued.caBundle)].map(fingerprintOf),
  );
  const secret = await client.get<Secret>("v1", "Secret", "webhook-cert", namespace);
  assert.equal(secret.metadata.resourceVersion, issuerVersion);
});
