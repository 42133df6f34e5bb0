/**
 * The informer against the real apiserver: it resumes a watch the server closed without relisting, an idle
 * informer sees a change within about a second even right after such a close, and a 410 Gone (provoked by
 * watching from a resourceVersion the apiserver no longer keeps) leads to a relist that loses nothing.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`). Works in throwaway namespaces.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GoneError, type KubeObject } from "../../kube/index.ts";
import { Informer, type ListWatchClient } from "../../operator/runtime/informer.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { captureLogger, type LogLine } from "../unit/runtime/capture-logger.ts";

const client = adminClient();

const labelSelector = "runtime-test=informer";

function configMap(name: string, namespace: string, value: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, labels: { "runtime-test": "informer" } },
    data: { value },
  };
}

function lease(name: string, namespace: string): KubeObject {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name, namespace },
    spec: { holderIdentity: name },
  };
}

/** Records when each handler call arrived, by "type name=value". */
function recordEvents(informer: Informer) {
  const seen = new Map<string, number>();
  const label = (type: string, o: KubeObject) =>
    `${type} ${o.metadata.name}=${(o.data as { value?: string } | undefined)?.value ?? (o.spec as { holderIdentity?: string } | undefined)?.holderIdentity}`;
  informer.addHandlers({
    onAdd: (o) => seen.set(label("add", o), performance.now()),
    onUpdate: (_old, o) => seen.set(label("update", o), performance.now()),
    onDelete: (o) => seen.set(label("delete", o), performance.now()),
  });
  return seen;
}

const count = (lines: LogLine[], msg: string) => lines.filter((l) => l.msg === msg).length;

test("an idle informer resumes server-closed watches without relisting and sees a change within a second", async (t) => {
  const namespace = await testNamespace(t, client, "rt-informer");
  await client.create(configMap("before", namespace, "1"));
  const { logger, lines } = captureLogger();
  // A 2-4 s server-side watch timeout makes the apiserver close the stream several times during the test.
  const informer = new Informer({
    client,
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace,
    labelSelector,
    logger,
    minWatchTimeoutSeconds: 2,
  });
  const seen = recordEvents(informer);
  informer.start();
  t.after(() => informer.stop());
  await informer.waitForSync();
  assert.ok(seen.has("add before=1"), "the initial list is delivered as adds");

  for (let round = 1; round <= 3; round++) {
    // WHEN the server has just closed the (idle) watch
    const closes = count(lines, "watch closed by server, resuming");
    await waitFor(
      `watch close #${closes + 1}`,
      async () => (count(lines, "watch closed by server, resuming") > closes ? true : undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 20,
      },
    );
    // THEN a change made right then arrives through the resumed watch: not after a relist (counted below) nor after
    // the watchdog's idle restart (150 s: the deadline stays well short of it); how fast is the benchmark's
    // (bench/informer-latency.ts)
    const started = performance.now();
    await client.create(configMap(`after-${round}`, namespace, String(round)));
    const arrived = await waitFor(`add after-${round}`, async () => seen.get(`add after-${round}=${round}`), {
      timeoutMs: 50_000,
      intervalMs: 10,
    });
    t.diagnostic(`round ${round}: change seen ${Math.round(arrived - started)} ms after the create`);
  }
  assert.equal(count(lines, "listed"), 1, "closed watches resumed from the last resourceVersion, no relist");
  assert.equal(count(lines, "list/watch failed"), 0);
  assert.ok(informer.staleness() < 5_000);

  await client.delete("v1", "ConfigMap", "before", namespace);
  await waitFor("delete before", async () => seen.get("delete before=1"), { timeoutMs: 50_000, intervalMs: 20 });
  assert.deepEqual([...informer.store.keys()].sort(), [
    `${namespace}/after-1`,
    `${namespace}/after-2`,
    `${namespace}/after-3`,
  ]);
});

/** Whether a watch of `namespace`'s Leases from resourceVersion "1" is answered 410 Gone (its history compacted). */
async function historyFromOneExpired(namespace: string): Promise<boolean> {
  const stop = new AbortController();
  try {
    const events = client.watch("coordination.k8s.io/v1", "Lease", {
      namespace,
      resourceVersion: "1",
      timeoutSeconds: 2,
      signal: stop.signal,
    });
    // Served from "1" (an event or a bookmark comes): not expired yet.
    await events[Symbol.asyncIterator]().next();
    return false;
  } catch (error) {
    if (error instanceof GoneError) return true;
    throw error;
  } finally {
    stop.abort();
  }
}

test(
  "a watch from an expired resourceVersion gets 410 Gone and relists without losing a change",
  { timeout: 10 * 60_000 },
  async (t) => {
    const namespace = await testNamespace(t, client, "rt-gone");
    await client.create(lease("a", namespace));
    // The apiserver compacts etcd's history every 5 minutes: until it first has (a cluster just started), a watch from
    // "1" is still served from etcd, and no 410 comes.
    await waitFor(
      "etcd's history to be compacted past resourceVersion 1 (every 5 minutes)",
      async () => ((await historyFromOneExpired(namespace)) ? true : undefined),
      { timeoutMs: 7 * 60_000, intervalMs: 5_000 },
    );
    const { logger, lines } = captureLogger();
    // The first list claims resourceVersion "1". Leases churn all the time (every node renews one every few
    // seconds), so the apiserver's watch history for them has long moved past "1" and the watch that follows is
    // answered with 410 Gone. Later lists are passed through untouched.
    let lists = 0;
    const staleFirstList: ListWatchClient = {
      listEach: (async (...args: Parameters<ListWatchClient["listEach"]>) => {
        const list = await client.listEach(...args);
        return ++lists === 1 ? { ...list, metadata: { ...list.metadata, resourceVersion: "1" } } : list;
      }) as ListWatchClient["listEach"],
      watch: client.watch.bind(client),
    };
    const informer = new Informer({
      client: staleFirstList,
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      namespace,
      logger,
    });
    const seen = recordEvents(informer);
    informer.start();
    t.after(() => informer.stop());
    await waitFor("relist after 410", async () => (lists >= 2 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 20,
    });
    assert.equal(count(lines, "watch expired (410 Gone), relisting"), 1, JSON.stringify(lines.slice(-5)));
    assert.equal(count(lines, "list/watch failed"), 0, "410 relists at once, without backoff");
    assert.ok(seen.has("add a=a"));
    // and the watch that followed the relist works (the deadline is well short of the idle watchdog's 150 s)
    await client.create(lease("b", namespace));
    await waitFor("add b", async () => seen.get("add b=b"), { timeoutMs: 50_000, intervalMs: 20 });
    assert.notEqual(informer.lastResourceVersion, "1");
  },
);
