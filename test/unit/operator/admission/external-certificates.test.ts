import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import type { InjectionResult } from "../../../../operator/admission/ca-injection.ts";
import {
  applyRotation,
  type StoredCertificates,
  type WebhookCertificates,
} from "../../../../operator/admission/certificate-store.ts";
import { splitPemBundle, type CertificatePair } from "../../../../operator/admission/certificates.ts";
import { ExternalCertificates, externalProblem } from "../../../../operator/admission/external-certificates.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";

const logger = pino({ level: "silent" });
const hour = 3_600_000;
const t0 = Date.UTC(2030, 0, 1);
const issue = { hosts: ["localhost"], certValidityMs: 10 * hour, caValidityMs: 100 * hour };

/** What cert-manager's CA issuer leaves in the Secret: no ca.key for us. The source can only `get` it (its type). */
const asIssued = (certificates: WebhookCertificates): WebhookCertificates => ({ ...certificates, caKey: "" });
const fresh = async (nowMs = t0) =>
  asIssued(await applyRotation({ kind: "issue-all", reason: "test" }, undefined, { ...issue, nowMs }));

class IssuerSecret {
  stored: StoredCertificates | undefined;
  private version = 0;
  async get() {
    return this.stored;
  }
  put(certificates: WebhookCertificates): void {
    this.stored = { certificates, resourceVersion: String(++this.version) };
  }
}

class RecordingInjector {
  bundles: string[] = [];
  private injected: string | undefined;
  async inject(bundle: string): Promise<InjectionResult> {
    const wrote = this.injected !== bundle;
    if (wrote) {
      this.injected = bundle;
      this.bundles.push(bundle);
    }
    return { trusted: true, wrote };
  }
}

function setup() {
  const secret = new IssuerSecret();
  const injector = new RecordingInjector();
  const clock = new FakeClock(t0);
  const served: CertificatePair[] = [];
  const source = new ExternalCertificates({
    secret,
    secretName: "myapp-system/myapp-operator-webhook-cert",
    injector,
    propagationMs: 10_000,
    onServing: (pair) => served.push(pair),
    logger,
    clock,
  });
  return { secret, injector, clock, served, source };
}

test("a Secret that cannot be served says why, naming the key to fix", async () => {
  const good = await fresh();
  assert.equal(externalProblem(good, t0), undefined);
  assert.match(externalProblem(undefined, t0) ?? "", /does not exist \(yet\): its issuer creates it/);
  assert.match(externalProblem({ ...good, servingKey: "" }, t0) ?? "", /tls\.crt and tls\.key/);
  assert.match(externalProblem({ ...good, caBundle: "" }, t0) ?? "", /ca\.crt holds no CA/);
  const other = await fresh(t0 + 1000);
  assert.match(externalProblem({ ...good, caBundle: other.caBundle }, t0) ?? "", /not issued by a CA in ca\.crt/);
  assert.match(externalProblem(good, t0 + 12 * hour) ?? "", /has expired/);
});

test("serves the issuer's certificate, injects its CA, and waits while the Secret is missing", async () => {
  const { secret, injector, served, source } = setup();
  await assert.rejects(source.check(), /myapp-operator-webhook-cert: it does not exist \(yet\)/);
  const issued = await fresh();
  secret.put(issued);
  await source.check();
  assert.deepEqual(served, [{ cert: issued.servingCert, key: issued.servingKey }]);
  assert.deepEqual(injector.bundles, [issued.caBundle]);
  await source.check();
  assert.equal(served.length, 1, "an unchanged Secret serves nothing new");
});

test("a renewal by the same CA is served at once; one from a new CA once both CAs have propagated", async () => {
  const { secret, injector, clock, served, source } = setup();
  const first = await applyRotation({ kind: "issue-all", reason: "test" }, undefined, { ...issue, nowMs: t0 });
  secret.put(asIssued(first));
  await source.check();
  // WHEN the issuer renews the certificate from the same CA
  const renewed = await applyRotation({ kind: "renew-serving", reason: "test" }, first, { ...issue, nowMs: t0 });
  secret.put(asIssued(renewed));
  await source.check();
  // THEN it is served at the next check: the apiserver trusts its CA already
  assert.equal(served.at(-1)?.cert, renewed.servingCert);
  // WHEN the issuer moves to a new CA
  const next = await fresh(t0 + 1000);
  secret.put(next);
  await source.check();
  // THEN both CAs are injected, and the old certificate is still served until that bundle has propagated
  assert.deepEqual(splitPemBundle(injector.bundles.at(-1)!), [
    ...splitPemBundle(first.caBundle),
    ...splitPemBundle(next.caBundle),
  ]);
  assert.equal(served.at(-1)?.cert, renewed.servingCert);
  await clock.advance(9_000);
  await source.check();
  assert.equal(served.at(-1)?.cert, renewed.servingCert);
  await clock.advance(2_000);
  await source.check();
  assert.equal(served.at(-1)?.cert, next.servingCert);
});

test("a CA leaves the injected bundle once it has expired", async () => {
  const { secret, injector, clock, source } = setup();
  secret.put(await fresh());
  await source.check();
  const second = await applyRotation({ kind: "issue-all", reason: "test" }, undefined, {
    ...issue,
    nowMs: t0 + 50 * hour,
  });
  clock.jumpWall(50 * hour);
  secret.put(asIssued(second));
  await source.check();
  assert.equal(splitPemBundle(injector.bundles.at(-1)!).length, 2);
  // WHEN the first CA (100 h) has expired, and the issuer renewed the certificate from the second
  clock.jumpWall(51 * hour);
  const renewed = await applyRotation({ kind: "renew-serving", reason: "test" }, second, {
    ...issue,
    nowMs: t0 + 101 * hour,
  });
  secret.put(asIssued(renewed));
  await source.check();
  assert.deepEqual(splitPemBundle(injector.bundles.at(-1)!), splitPemBundle(second.caBundle));
});
