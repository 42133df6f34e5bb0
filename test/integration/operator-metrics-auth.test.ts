/**
 * /metrics behind authentication and authorization (`--metrics-secure`), against the real apiserver's
 * TokenReview and SubjectAccessReview: no token → 401, a token of a ServiceAccount without the right → 403, the
 * same token once a ClusterRole grants `get` on the non-resource URL /metrics → 200. The probes stay open. Without a
 * mounted certificate (`--metrics-cert-dir`) /metrics is HTTPS with a self-signed one, so tokens never go in clear.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect, type PeerCertificate } from "node:tls";
import { test } from "node:test";
import { getMetrics } from "../../bench/support/prometheus.ts";
import { adminClient, testNamespace, waitFor, kubectl } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";

const client = adminClient();

test("--metrics-secure: 401 without a token, 403 without the right, 200 with it; probes stay open", async (t) => {
  const namespace = await testNamespace(t, client, "op-metrics");
  const operator = await startOperator(t, {
    namespaces: [namespace],
    leaderElection: false,
    args: ["--metrics-secure"],
  });
  const scrape = (token?: string) => getMetrics(operator.metricsUrl, token);

  // GIVEN /metrics over TLS, its certificate self-signed (none mounted), for the host and localhost
  const url = new URL(operator.metricsUrl);
  assert.equal(url.protocol, "https:");
  const socket = connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false });
  await once(socket, "secureConnect");
  const certificate: PeerCertificate = socket.getPeerCertificate();
  socket.destroy();
  assert.match(String(certificate.issuer.CN), /^myapp-operator-metrics-ca@\d+$/);
  assert.match(certificate.subjectaltname ?? "", /DNS:localhost/);
  assert.equal(
    (await fetch(`http://${url.host}/metrics`).catch((error: unknown) => error)) instanceof Error,
    true,
    "no plain HTTP on the metrics port",
  );

  // WHEN a scrape comes without a token THEN 401
  assert.equal((await scrape()).status, 401);
  assert.equal((await scrape("not-a-token")).status, 401);

  // WHEN a ServiceAccount's token without any right on /metrics is presented THEN 403, naming the user
  await kubectl("-n", namespace, "create", "serviceaccount", "scraper");
  const token = (await kubectl("-n", namespace, "create", "token", "scraper", "--duration=10m")).trim();
  const forbidden = await scrape(token);
  assert.equal(forbidden.status, 403, forbidden.body);
  assert.match(forbidden.body, new RegExp(`system:serviceaccount:${namespace}:scraper`));

  // WHEN a ClusterRole grants it `get` on /metrics THEN 200 with the metrics (once the refusal, kept 10 s, expired)
  const role = `${namespace}-metrics-reader`;
  await kubectl("create", "clusterrole", role, "--verb=get", "--non-resource-url=/metrics");
  t.after(() => kubectl("delete", "clusterrole", role, "--ignore-not-found").then(() => undefined));
  await kubectl("create", "clusterrolebinding", role, `--clusterrole=${role}`, `--serviceaccount=${namespace}:scraper`);
  t.after(() => kubectl("delete", "clusterrolebinding", role, "--ignore-not-found").then(() => undefined));
  const allowed = await waitFor("the scrape to be allowed", async () => {
    const answer = await scrape(token);
    return answer.status === 200 ? answer : undefined;
  });
  assert.match(
    allowed.body,
    /^controller_runtime_reconcile_total\{controller="myappinstance",result="success"\} \d+$/m,
  );

  // AND the probes answer without any token (the kubelet sends none)
  assert.equal((await fetch(`${operator.probeUrl}/healthz`)).status, 200);
});
