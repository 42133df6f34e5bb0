/**
 * A tenant's flood of objects carrying the operator's label. The apiserver filters an informer by label alone, and
 * anyone who may create a ConfigMap may label it `app.kubernetes.io/managed-by: myapp-operator`; the cache keeps
 * each as its identity (about 1–2 KiB), so enough of them (~90,000 on a 128 MiB heap) exhausted the heap of the
 * operator every namespace shares. Now a namespace may have a sixty-fourth of the heap per kind of such objects
 * (operator/heap-budgets.ts); past it the cache stops keeping that kind of that namespace and its reconciles read
 * live (operator/runtime/informer.ts, NamespaceLimit).
 *
 * The real cluster and operator process on a 64 MiB heap (a limit of 536 per kind): 300 labelled ConfigMaps before it
 * starts, within the limit; 300 more while it runs, past it. The namespace is no longer cached (log and metric), a
 * chart instance in it is Ready and its drift is repaired (live reads, events still delivered), an instance in another
 * namespace alike. Then 52 ConfigMaps of 40,000 keys labelled as that instance's: its reconcile's live lists keep
 * them as the cache would, as identities (held whole, they killed such an operator at every start); after a restart
 * the first list finds the namespace past its limit and keeps none of it.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { scrape, sum } from "../../bench/support/prometheus.ts";
import { chartInstanceRepairs, handEditUndone } from "../support/chart-drift.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { helmBinary } from "../support/helm.ts";
import { apiVersion, kind } from "../../api/index.ts";
import { exitOf, startOperator, waitForInstance, type LogLine } from "../support/operator.ts";

const client = adminClient();

/** `count` tiny ConfigMaps `prefix-N` in `namespace` with the operator's label and no owner, ten at a time. */
async function flood(namespace: string, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, (_, n) =>
        client.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: `${prefix}-${i + n}`,
            namespace,
            labels: { "app.kubernetes.io/managed-by": "myapp-operator" },
          },
          data: { n: String(i + n) },
        }),
      ),
    );
  }
}

/** The operator's log line that says it stopped caching the ConfigMaps of `namespace`. */
const uncached = (namespace: string) => (line: LogLine) =>
  line.informer === "ConfigMap" && line["namespace"] === namespace && /namespace past its limit/.test(line.msg ?? "");

async function start(t: TestContext, namespaces: readonly string[]) {
  const operator = await startOperator(t, {
    namespaces,
    leaderElection: false,
    args: [`--helm=${await helmBinary()}`],
    env: { NODE_OPTIONS: "--max-old-space-size=64 --max-semi-space-size=1" },
  });
  const exited = exitOf(operator);
  exited.catch(() => {}); // the test stops it in the end
  return { operator, alive: <T>(work: Promise<T>) => Promise.race([work, exited]) };
}

test(
  "a namespace's flood of labelled objects is read live past its limit, and costs the operator no more",
  { timeout: 12 * 60_000 },
  async (t) => {
    // GIVEN 300 labelled ConfigMaps in namespace flood before the operator starts: within the limit
    const flooded = await testNamespace(t, client, "flood");
    const quiet = await testNamespace(t, client, "quiet");
    await flood(flooded, "before", 300);
    const { operator, alive } = await start(t, [flooded, quiet]);
    await alive(
      waitFor(
        "the operator's caches to sync",
        async () => (operator.logs.some((l) => l.msg === "caches synced, starting workers") ? true : undefined),
        { timeoutMs: 120_000 },
      ),
    );
    assert.equal(operator.logs.some(uncached(flooded)), false, "300 are within the limit of 536");

    // WHEN 300 more come while it runs
    await alive(flood(flooded, "after", 300));
    // THEN it stops caching the namespace's ConfigMaps, and says so in its log and metrics
    await alive(operator.waitForLog(uncached(flooded), { timeoutMs: 120_000, what: "the namespace past its limit" }));
    const samples = await scrape(operator.metricsUrl);
    assert.equal(
      sum(samples, "myapp_operator_cache_uncached_namespaces", (labels) => labels.kind === "ConfigMap"),
      1,
    );
    assert.equal(
      sum(samples, "myapp_operator_cache_uncached_namespaces", (labels) => labels.kind === "Deployment"),
      0,
    );

    // AND a chart instance in that namespace is Ready and its drift repaired: read live, woken by its events
    await chartInstanceRepairs(client, flooded, "web", alive);
    // AND one in another namespace alike
    await chartInstanceRepairs(client, quiet, "web", alive);

    // WHEN the tenant adds 52 ConfigMaps of 40,000 keys (0.47 MB of JSON, ~2.5 MB of heap each) labelled as web's
    // chart's and as web's, and asks for a reconcile
    const keys = Object.fromEntries(Array.from({ length: 40_000 }, (_, n) => [`k${n}`, ""]));
    for (const label of ["myapp.example.com/chart-instance", "app.kubernetes.io/instance"]) {
      for (let n = 0; n < 26; n++) {
        await alive(
          client.create({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: {
              name: `heavy-${label.startsWith("myapp") ? "chart" : "instance"}-${n}`,
              namespace: flooded,
              labels: { "app.kubernetes.io/managed-by": "myapp-operator", [label]: "web" },
            },
            data: keys,
          }),
        );
      }
    }
    await client.mergePatch(apiVersion, kind, "web", flooded, {
      metadata: { annotations: { "myapp.example.com/reconcile-requested-at": "after-the-heavy-ones" } },
    });
    // THEN the reconcile's live lists keep them as the cache would (identities), and it answers: the operator lives
    await alive(
      waitForInstance(
        client,
        flooded,
        "web",
        "the request answered",
        (instance) => instance.status?.lastHandledReconcileAt === "after-the-heavy-ones",
        120_000,
      ),
    );

    // WHEN the operator restarts THEN its first list finds the namespace past its limit, and the instance there is
    // still looked after
    await operator.stop();
    const again = await start(t, [flooded, quiet]);
    await again.alive(
      again.operator.waitForLog(uncached(flooded), {
        timeoutMs: 120_000,
        what: "the namespace past its limit at the first list",
      }),
    );
    await handEditUndone(client, flooded, "web", again.alive);
  },
);
