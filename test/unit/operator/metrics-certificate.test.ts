import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { hostname } from "node:os";
import { createSecureContext } from "node:tls";
import { test } from "node:test";
import { selfSignedMetricsTls, selfSignedMetricsValidityMs } from "../../../operator/metrics-certificate.ts";

test("the self-signed /metrics certificate: for this host and localhost, a year, its CA in the chain", async () => {
  const nowMs = Date.UTC(2026, 11, 4);
  const { cert, key } = await selfSignedMetricsTls(nowMs);
  assert.doesNotThrow(() => createSecureContext({ cert, key }), "a TLS server can serve it");
  const [leafPem, caPem] = cert.split(/(?<=-----END CERTIFICATE-----\n)/);
  const leaf = new X509Certificate(leafPem!);
  const ca = new X509Certificate(caPem!);
  assert.ok(leaf.checkIssued(ca) && leaf.verify(ca.publicKey), "signed by the CA that follows it");
  assert.ok(leaf.checkHost("localhost") && leaf.checkHost(hostname()) && leaf.checkIP("127.0.0.1"));
  assert.ok(leaf.checkPrivateKey((await import("node:crypto")).createPrivateKey(key)));
  assert.equal(leaf.validToDate.getTime(), nowMs + selfSignedMetricsValidityMs);
  assert.match(ca.subject, /CN=myapp-operator-metrics-ca@\d+/);
});
