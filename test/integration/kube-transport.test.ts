/**
 * The cluster connection against the real apiserver when a token dies: every request gets its 401 at once, however
 * many are in flight. Over HTTP/2 the apiserver answers a 401 and ends the connection with GOAWAY: with undici's
 * HTTP/2, a fifth of such requests failed with that GOAWAY instead of their 401, and some were left unanswered until
 * their timeout; kube/transport.ts keeps the pool on HTTP/1.1 for that reason.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { stringify } from "yaml";
import { KubeClient, loadKubeConfig, UnauthorizedError } from "../../kube/index.ts";
import { adminClient } from "../support/cluster.ts";

test("requests with a rejected token, four at a time, all get their 401 (none waits out its timeout)", async (t) => {
  const admin = adminClient().config;
  const cluster = admin.getCurrentCluster()!;
  const kubeconfig = stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "local",
        cluster: {
          server: cluster.server,
          ...(cluster.caFile ? { "certificate-authority": cluster.caFile } : {}),
          ...(cluster.caData ? { "certificate-authority-data": cluster.caData } : {}),
        },
      },
    ],
    users: [{ name: "revoked", user: { token: "a-token-the-apiserver-does-not-know" } }],
    contexts: [{ name: "revoked", context: { cluster: "local", user: "revoked" } }],
    "current-context": "revoked",
  });
  // A hang shows as a TransportError ("no answer within 20000 ms") instead of an UnauthorizedError.
  const client = new KubeClient(loadKubeConfig({ kubeconfig }), { requestTimeoutMs: 20_000 });
  t.after(() => client.close());
  const outcomes = new Map<string, number>();
  for (let round = 0; round < 30; round++) {
    const requests = [0, 1, 2, 3].map((i) =>
      i % 2 === 0
        ? client.list("apps/v1", "Deployment", { namespace: "default" })
        : client.apply(
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: `revoked-${round}-${i}`, namespace: "default" },
              data: { key: "value" },
            },
            { fieldManager: "kube-transport-test", force: true },
          ),
    );
    for (const result of await Promise.allSettled(requests)) {
      const outcome =
        result.status === "fulfilled"
          ? "answered"
          : result.reason instanceof UnauthorizedError
            ? "401"
            : String(result.reason);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
  }
  assert.deepEqual(Object.fromEntries(outcomes), { "401": 120 });
});
