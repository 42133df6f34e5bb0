/**
 * /metrics behind authentication and authorization (`--metrics-secure`), against the real apiserver's
 * TokenReview and SubjectAccessReview: no token → 401, a token of a ServiceAccount without the right → 403, the
 * same token once a ClusterRole grants `get` on the non-resource URL /metrics → 200. The probes stay open.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
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
  const scrape = async (token?: string) => {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    const response = await fetch(operator.metricsUrl, { headers });
    return { status: response.status, body: await response.text() };
  };

  // WHEN a scrape comes without a token THEN 401
  assert.equal((await scrape()).status, 401);
  assert.equal((await scrape("not-a-token")).status, 401);

  // WHEN a ServiceAccount's token without any right on /metrics is presented THEN 403, naming the user
  await kubectl("-n", namespace, "create", "serviceaccount", "scraper");
  const token = (await kubectl("-n", namespace, "create", "token", "scraper", "--duration=10m")).trim();
  const forbidden = await scrape(token);
  assert.equal(forbidden.status, 403, forbidden.body);
  assert.match(forbidden.body, new RegExp(`system:serviceaccount:${namespace}:scraper`));

  // WHEN a ClusterRole grants it `get` on /metrics THEN 200 with the metrics (once the 10 s verdict cache expired)
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
  assert.ok(
    operator.logs.some(
      (line) => line.msg === "--metrics-secure without --metrics-cert-dir: bearer tokens reach /metrics unencrypted",
    ),
  );
});
