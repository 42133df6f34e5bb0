import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { ConflictError } from "../../../../kube/index.ts";
import {
  applyRotation,
  CertificateStore,
  planRotation,
  type CertificateSecretClient,
  type StoredCertificates,
  type WebhookCertificates,
} from "../../../../operator/admission/certificate-store.ts";
import type { InjectionResult } from "../../../../operator/admission/ca-injection.ts";
import {
  fingerprintOf,
  isIssuedBy,
  splitPemBundle,
  validityOf,
  type CertificatePair,
} from "../../../../operator/admission/certificates.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";

const logger = pino({ level: "silent" });
const hour = 3_600_000;
const t0 = Date.UTC(2030, 0, 1);
const hosts = ["localhost", "127.0.0.1"];
const issue = { hosts, certValidityMs: 10 * hour, caValidityMs: 100 * hour };

async function fresh(nowMs = t0): Promise<WebhookCertificates> {
  return applyRotation({ kind: "issue-all", reason: "test" }, undefined, { ...issue, nowMs });
}

/** Certificates as a store that checked regularly has them at `nowMs`: the serving certificate issued just before. */
async function servedUntil(certificates: WebhookCertificates, nowMs: number): Promise<WebhookCertificates> {
  return applyRotation({ kind: "renew-serving", reason: "test" }, certificates, { ...issue, nowMs: nowMs - hour });
}

const plan = (certificates: WebhookCertificates | undefined, nowMs: number, bundleTrusted = true) =>
  planRotation({ certificates, nowMs, hosts, bundleTrusted });

test("a missing Secret, or one without a usable CA, is filled anew", async () => {
  const good = await fresh();
  assert.equal(plan(undefined, t0).kind, "issue-all");
  assert.equal(plan({ servingCert: "", servingKey: "", caBundle: "", caKey: "" }, t0).kind, "issue-all");
  assert.equal(plan({ ...good, caKey: good.servingKey }, t0).kind, "issue-all", "ca.key of another certificate");
  assert.equal(plan(good, t0 + 101 * hour).kind, "issue-all", "expired CA");
});

test("a fresh Secret needs nothing; the serving certificate is renewed from the same CA at two thirds of its life", async () => {
  // GIVEN certificates issued at t0 (serving: 1 h backdated + 10 h, so due after 11 h × 2/3 − 1 h ≈ 6.3 h)
  const certificates = await fresh();
  assert.deepEqual(plan(certificates, t0), { kind: "none" });
  assert.deepEqual(plan(certificates, t0 + 6 * hour), { kind: "none" });
  // THEN it is due later, and renewing it from the same CA needs no trust of anything new
  const due = plan(certificates, t0 + 7 * hour, false);
  assert.equal(due.kind, "renew-serving");
  const renewed = await applyRotation(due as { kind: "renew-serving"; reason: string }, certificates, {
    ...issue,
    nowMs: t0 + 7 * hour,
  });
  assert.equal(renewed.caBundle, certificates.caBundle);
  assert.notEqual(renewed.servingCert, certificates.servingCert);
  assert.ok(isIssuedBy(renewed.servingCert, splitPemBundle(renewed.caBundle)[0]!));
  assert.deepEqual(plan(renewed, t0 + 7 * hour), { kind: "none" });
});

test("a serving certificate for other hosts is renewed, with the hosts named", async () => {
  const certificates = await fresh();
  const step = planRotation({ certificates, nowMs: t0, hosts: ["webhook.ns.svc"], bundleTrusted: false });
  assert.equal(step.kind, "renew-serving");
  assert.match((step as { reason: string }).reason, /for localhost, 127\.0\.0\.1, not webhook\.ns\.svc/);
  // IPv6 in any spelling matches what the certificate holds
  const v6 = await applyRotation({ kind: "issue-all", reason: "" }, undefined, { ...issue, hosts: ["::1"], nowMs: t0 });
  assert.deepEqual(planRotation({ certificates: v6, nowMs: t0, hosts: ["0::1"], bundleTrusted: true }), {
    kind: "none",
  });
});

test("a CA rotation adds the new CA first, serves from the new CA only once it is trusted, then drops the old CA when it expires", async () => {
  // GIVEN certificates from t0 kept current, and a time when the CA (1 h backdate + 100 h) has less than a third left
  const late = t0 + 70 * hour;
  const certificates = await servedUntil(await fresh(), late);
  const step = plan(certificates, late);
  assert.equal(step.kind, "rotate-ca");

  // WHEN the CA is rotated
  const rotated = await applyRotation(step as { kind: "rotate-ca"; reason: string }, certificates, {
    ...issue,
    nowMs: late,
  });
  const [newCa, oldCa] = splitPemBundle(rotated.caBundle);
  // THEN the bundle is [new, old], the serving certificate is untouched (still from the old CA)
  assert.equal(oldCa, splitPemBundle(certificates.caBundle)[0]);
  assert.notEqual(fingerprintOf(newCa!), fingerprintOf(oldCa!));
  assert.equal(rotated.servingCert, certificates.servingCert);

  // AND a serving certificate from the new CA waits until the bundle is trusted
  assert.equal(plan(rotated, late, false).kind, "wait-for-trust");
  const renew = plan(rotated, late, true);
  assert.equal(renew.kind, "renew-serving");
  const served = await applyRotation(renew as { kind: "renew-serving"; reason: string }, rotated, {
    ...issue,
    nowMs: late,
  });
  assert.ok(isIssuedBy(served.servingCert, newCa!));
  assert.deepEqual(plan(served, late), { kind: "none" }, "the old CA stays while it is valid");

  // AND once the old CA expired (the serving certificate renewed meanwhile), it leaves the bundle
  const afterOld = validityOf(oldCa!).notAfter + 1000;
  const current = await servedUntil(served, afterOld);
  const prune = plan(current, afterOld);
  assert.equal(prune.kind, "prune-bundle");
  const pruned = await applyRotation(prune as { kind: "prune-bundle"; reason: string }, current, {
    ...issue,
    nowMs: afterOld,
  });
  assert.deepEqual(splitPemBundle(pruned.caBundle), [newCa]);
});

test("a CA due while the serving certificate still waits for the previous rotation does not rotate again", async () => {
  // GIVEN a rotation under way (serving from the old CA), with a new CA so short-lived that it is due already
  const certificates = await servedUntil(await fresh(), t0 + 70 * hour);
  const rotated = await applyRotation({ kind: "rotate-ca", reason: "" }, certificates, {
    ...issue,
    caValidityMs: 3 * hour,
    nowMs: t0 + 70 * hour,
  });
  // THEN the serving certificate is waited for, or renewed, first: rotating now would drop the CA it is from
  assert.equal(plan(rotated, t0 + 72 * hour, false).kind, "wait-for-trust");
  assert.equal(plan(rotated, t0 + 72 * hour, true).kind, "renew-serving");
});

test("a serving certificate that is broken, expired or from no CA in the bundle is renewed at once", async () => {
  const certificates = await fresh();
  const other = await fresh();
  assert.equal(plan({ ...certificates, servingKey: other.servingKey }, t0, false).kind, "renew-serving");
  assert.equal(plan({ ...certificates, servingCert: "" }, t0, false).kind, "renew-serving");
  assert.equal(
    plan({ ...certificates, servingCert: other.servingCert, servingKey: other.servingKey }, t0, false).kind,
    "renew-serving",
  );
});

// ---- the store, against an in-memory Secret ----

class MemorySecret implements CertificateSecretClient {
  stored: StoredCertificates | undefined;
  private version = 0;
  writes = 0;
  /** Runs before a write is judged: lets a test slip in another writer. */
  beforeWrite: (() => void) | undefined;

  async get() {
    return this.stored;
  }
  async create(certificates: WebhookCertificates) {
    this.beforeWrite?.();
    if (this.stored) throw new ConflictError(409, "already exists", "AlreadyExists");
    return this.put(certificates);
  }
  async update(certificates: WebhookCertificates, resourceVersion: string) {
    this.beforeWrite?.();
    if (this.stored?.resourceVersion !== resourceVersion) throw new ConflictError(409, "changed", "Conflict");
    return this.put(certificates);
  }
  put(certificates: WebhookCertificates): StoredCertificates {
    this.writes++;
    this.stored = { certificates, resourceVersion: String(++this.version) };
    return this.stored;
  }
}

class RecordingInjector {
  bundles: string[] = [];
  trusted = true;
  private injected: string | undefined;
  async inject(bundle: string): Promise<InjectionResult> {
    const wrote = this.trusted && this.injected !== bundle;
    if (wrote) {
      this.injected = bundle;
      this.bundles.push(bundle);
    }
    return { trusted: this.trusted, wrote };
  }
}

function store(
  secret: CertificateSecretClient,
  injector: RecordingInjector,
  clock: FakeClock,
  served: CertificatePair[],
) {
  return new CertificateStore({
    secret,
    injector,
    hosts,
    certValidityMs: 10 * hour,
    caValidityMs: 100 * hour,
    propagationMs: 10_000,
    onServing: (pair) => served.push(pair),
    logger,
    clock,
  });
}

/**
 * Checks every hour (renewing the serving certificate as it falls due) until a check rotates the CA; `justBefore`
 * runs before that check.
 */
async function ageUntilCaRotates(
  s: CertificateStore,
  secret: MemorySecret,
  clock: FakeClock,
  served: CertificatePair[],
  justBefore: () => void = () => undefined,
): Promise<void> {
  const firstCa = splitPemBundle(secret.stored!.certificates.caBundle)[0];
  for (let h = 1; h < 100; h++) {
    const next = clock.wallTimeMs() + hour;
    const due = planRotation({ certificates: secret.stored!.certificates, nowMs: next, hosts, bundleTrusted: true });
    if (due.kind === "rotate-ca") justBefore();
    clock.jumpWall(hour);
    await s.check();
    if (splitPemBundle(secret.stored!.certificates.caBundle)[0] !== firstCa) {
      assert.ok(served.length > 1, "the serving certificate was renewed from the first CA meanwhile");
      return;
    }
  }
  assert.fail("the CA never rotated");
}

test("two stores starting together create one Secret and serve the same certificate", async () => {
  // GIVEN no Secret, and a second replica whose create lands just before the first one's
  const secret = new MemorySecret();
  const clock = new FakeClock(t0);
  const servedA: CertificatePair[] = [];
  const servedB: CertificatePair[] = [];
  const a = store(secret, new RecordingInjector(), clock, servedA);
  const b = store(secret, new RecordingInjector(), clock, servedB);
  const theirs = await fresh();
  secret.beforeWrite = () => {
    secret.beforeWrite = undefined;
    secret.put(theirs);
  };
  // WHEN both load
  await a.load();
  await b.load();
  // THEN the first lost the create (409), and both serve the winner's certificate from the one Secret
  assert.equal(secret.writes, 1);
  assert.deepEqual(servedA, [{ cert: theirs.servingCert, key: theirs.servingKey }]);
  assert.deepEqual(servedB, servedA);
});

test("an idle check writes nothing and serves nothing new", async () => {
  const secret = new MemorySecret();
  const injector = new RecordingInjector();
  const clock = new FakeClock(t0);
  const served: CertificatePair[] = [];
  const s = store(secret, injector, clock, served);
  await s.load();
  const writes = secret.writes;
  for (let i = 0; i < 5; i++) {
    clock.jumpWall(60_000);
    await s.check();
  }
  assert.equal(secret.writes, writes);
  assert.equal(injector.bundles.length, 1, "the bundle was injected once");
  assert.equal(served.length, 1);
});

test("a CA rotation is injected before a certificate from the new CA is served, after the propagation time", async () => {
  // GIVEN a store serving since t0
  const secret = new MemorySecret();
  const injector = new RecordingInjector();
  const clock = new FakeClock(t0);
  const served: CertificatePair[] = [];
  const s = store(secret, injector, clock, served);
  await s.load();
  const firstCa = splitPemBundle(secret.stored!.certificates.caBundle)[0]!;

  // WHEN the CA falls due (checked every hour until then, which renews the serving certificate as it goes)
  await ageUntilCaRotates(s, secret, clock, served);
  // THEN the new bundle is injected while the old serving certificate is still served
  const [newCa, oldCa] = splitPemBundle(secret.stored!.certificates.caBundle);
  assert.equal(oldCa, firstCa);
  assert.equal(injector.bundles.at(-1), secret.stored!.certificates.caBundle);
  const before = served.length;
  assert.ok(
    isIssuedBy(served.at(-1)!.cert, oldCa!),
    "nothing new served before the apiserver had time to trust the new CA",
  );

  // AND within the propagation time nothing new is served; after it, a certificate from the new CA is
  await clock.advance(5_000);
  await s.check();
  assert.equal(served.length, before);
  await clock.advance(5_000);
  await s.check();
  assert.equal(served.length, before + 1);
  assert.ok(isIssuedBy(served.at(-1)!.cert, newCa!));
});

test("while the configurations cannot be updated, a certificate from a new CA is never served", async () => {
  const secret = new MemorySecret();
  const injector = new RecordingInjector();
  const clock = new FakeClock(t0);
  const served: CertificatePair[] = [];
  const s = store(secret, injector, clock, served);
  await s.load();
  await ageUntilCaRotates(s, secret, clock, served, () => (injector.trusted = false));
  const before = served.length;
  for (let i = 0; i < 5; i++) {
    await clock.advance(60_000);
    await s.check();
  }
  assert.equal(served.length, before);
  // AND once they can, it is
  injector.trusted = true;
  await s.check();
  await clock.advance(10_000);
  await s.check();
  assert.equal(served.length, before + 1);
  assert.ok(isIssuedBy(served.at(-1)!.cert, splitPemBundle(secret.stored!.certificates.caBundle)[0]!));
});

test("a store that loses an update race re-reads and takes the winner's certificates", async () => {
  // GIVEN a store whose serving certificate is due, and another replica's renewal landing just before its own
  const secret = new MemorySecret();
  const clock = new FakeClock(t0);
  const served: CertificatePair[] = [];
  const s = store(secret, new RecordingInjector(), clock, served);
  await s.load();
  clock.jumpWall(7 * hour);
  const theirs = await applyRotation({ kind: "renew-serving", reason: "" }, secret.stored!.certificates, {
    ...issue,
    nowMs: clock.wallTimeMs(),
  });
  secret.beforeWrite = () => {
    secret.beforeWrite = undefined;
    secret.put(theirs);
  };
  // WHEN it checks
  await s.check();
  // THEN its own write lost (409), it took theirs, which needs nothing more, and serves it
  assert.equal(secret.stored!.certificates, theirs);
  assert.equal(secret.writes, 2);
  assert.deepEqual(served.at(-1), { cert: theirs.servingCert, key: theirs.servingKey });
});
