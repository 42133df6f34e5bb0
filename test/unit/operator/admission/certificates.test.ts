import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { test } from "node:test";
import {
  backdateMs,
  createCertificateAuthority,
  createServingCertificate,
  fingerprintOf,
  hostsOf,
  isExpired,
  isIssuedBy,
  keyMatches,
  needsRotation,
  splitPemBundle,
  validityOf,
} from "../../../../operator/admission/certificates.ts";

const now = Date.parse("2026-01-01T00:00:00Z");
const hour = 3_600_000;

test("a CA is a self-signed ECDSA P-256 CA limited to leaf certificates, valid for the given time", async () => {
  // WHEN a CA is created for 10 hours
  const ca = await createCertificateAuthority({ validityMs: 10 * hour, nowMs: now });
  const cert = new X509Certificate(ca.cert);
  // THEN it is a CA, self-signed, its key matches, and notAfter is now + validity (notBefore backdated a tenth)
  assert.equal(cert.ca, true);
  assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, "prime256v1");
  assert.ok(isIssuedBy(ca.cert, ca.cert));
  assert.ok(keyMatches(ca.cert, ca.key));
  assert.deepEqual(validityOf(ca.cert), { notBefore: now - hour, notAfter: now + 10 * hour });
  assert.match(cert.subject, /^CN=myapp-operator-webhook-ca@\d+$/);
  const parsed = new x509.X509Certificate(ca.cert);
  const constraints = parsed.getExtension(x509.BasicConstraintsExtension);
  assert.deepEqual([constraints?.ca, constraints?.pathLength, constraints?.critical], [true, 0, true]);
  const usages = parsed.getExtension(x509.KeyUsagesExtension)?.usages ?? 0;
  assert.ok(usages & x509.KeyUsageFlags.keyCertSign, "it may sign certificates");
});

test("a serving certificate carries every host as a SAN, chains to its CA, and is a leaf for serverAuth", async () => {
  // GIVEN a CA
  const ca = await createCertificateAuthority({ validityMs: 100 * hour, nowMs: now });
  // WHEN a serving certificate is issued for a DNS name, a Service name and two IPs
  const hosts = ["myapp-operator-webhook.ns.svc", "localhost", "127.0.0.1", "::1"];
  const serving = await createServingCertificate({ ca, hosts, validityMs: 10 * hour, nowMs: now });
  const cert = new X509Certificate(serving.cert);
  // THEN the SANs are exactly the hosts, the chain verifies, it is no CA, and it is for servers
  assert.deepEqual(hostsOf(serving.cert), [
    "myapp-operator-webhook.ns.svc",
    "localhost",
    "127.0.0.1",
    "0:0:0:0:0:0:0:1",
  ]);
  assert.equal(cert.checkHost("myapp-operator-webhook.ns.svc"), "myapp-operator-webhook.ns.svc");
  assert.equal(cert.checkIP("127.0.0.1"), "127.0.0.1");
  assert.equal(cert.checkHost("other.example"), undefined);
  assert.ok(isIssuedBy(serving.cert, ca.cert));
  assert.ok(cert.verify(new X509Certificate(ca.cert).publicKey));
  assert.equal(cert.ca, false);
  assert.deepEqual(cert.keyUsage, ["1.3.6.1.5.5.7.3.1"]);
  assert.ok(keyMatches(serving.cert, serving.key));
  assert.ok(!keyMatches(serving.cert, ca.key));
  assert.deepEqual(validityOf(serving.cert), { notBefore: now - hour, notAfter: now + 10 * hour });
});

test("a serving certificate does not outlive its CA, and another CA's certificate does not chain", async () => {
  // GIVEN a CA that expires in 2 hours, and another CA
  const ca = await createCertificateAuthority({ validityMs: 2 * hour, nowMs: now });
  const other = await createCertificateAuthority({ validityMs: 2 * hour, nowMs: now });
  // WHEN a certificate for 10 hours is asked for
  const serving = await createServingCertificate({ ca, hosts: ["localhost"], validityMs: 10 * hour, nowMs: now });
  // THEN it ends with the CA
  assert.equal(validityOf(serving.cert).notAfter, now + 2 * hour);
  assert.ok(!isIssuedBy(serving.cert, other.cert));
  assert.notEqual(fingerprintOf(ca.cert), fingerprintOf(other.cert));
});

test("hosts that are neither IPs nor DNS names are refused with the field named", async () => {
  const ca = await createCertificateAuthority({ validityMs: hour, nowMs: now });
  await assert.rejects(
    createServingCertificate({ ca, hosts: ["https://x"], validityMs: hour, nowMs: now }),
    /hosts: "https:\/\/x" is neither an IP address nor a DNS name/,
  );
  await assert.rejects(createServingCertificate({ ca, hosts: [], validityMs: hour, nowMs: now }), /hosts: /);
  await assert.rejects(createCertificateAuthority({ validityMs: 0, nowMs: now }), /validityMs must be a positive/);
});

test("rotation is due once less than a third of the lifetime is left", async () => {
  // GIVEN a certificate valid from now − 1h (backdated) to now + 10h: an 11 h lifetime
  const ca = await createCertificateAuthority({ validityMs: 10 * hour, nowMs: now });
  const { notBefore, notAfter } = validityOf(ca.cert);
  const third = (notAfter - notBefore) / 3;
  // THEN it is not due until the last third, due inside it and after expiry
  assert.equal(needsRotation(ca.cert, now), false);
  assert.equal(needsRotation(ca.cert, notAfter - third - 1000), false);
  assert.equal(needsRotation(ca.cert, notAfter - third + 1000), true);
  assert.equal(needsRotation(ca.cert, notAfter + 1000), true);
  assert.equal(isExpired(ca.cert, notAfter - 1), false);
  assert.equal(isExpired(ca.cert, notAfter + 1), true);
});

test("backdating is a tenth of the validity, at most an hour", () => {
  assert.equal(backdateMs(20_000), 2_000);
  assert.equal(backdateMs(2160 * hour), hour);
});

test("a PEM bundle splits into its certificates", async () => {
  const a = await createCertificateAuthority({ validityMs: hour, nowMs: now });
  const b = await createCertificateAuthority({ validityMs: hour, nowMs: now });
  assert.deepEqual(splitPemBundle(`${a.cert}${b.cert}`), [a.cert, b.cert]);
  assert.deepEqual(splitPemBundle(""), []);
});
