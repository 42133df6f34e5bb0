import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ForbiddenError,
  GoneError,
  NotFoundError,
  ServerError,
  TooManyRequestsError,
  TransportError,
} from "../../../kube/errors.ts";
import type { KubeObject } from "../../../kube/client.ts";
import { informerReadiness } from "../../../operator/runtime/health-server.ts";
import { Informer, reconnectBackoffCapMs, type InformerOptions } from "../../../operator/runtime/informer.ts";
import { captureLogger } from "./capture-logger.ts";
import { FakeClock, settle } from "./fake-clock.ts";
import { deployment, FakeListWatch, listOf } from "./fake-list-watch.ts";

function setup(options: Partial<InformerOptions> = {}) {
  const clock = new FakeClock();
  const api = new FakeListWatch();
  const { logger, lines } = captureLogger();
  const events: string[] = [];
  const informer = new Informer({
    client: api.client,
    apiVersion: "apps/v1",
    kind: "Deployment",
    logger,
    clock,
    random: () => 0,
    ...options,
  });
  const name = (o: KubeObject) => `${o.metadata.name}@${o.metadata.resourceVersion}`;
  informer.addHandlers({
    onAdd: (o) => events.push(`add ${name(o)}`),
    onUpdate: (old, o) => events.push(`update ${name(old)}->${name(o)}`),
    onDelete: (o) => events.push(`delete ${name(o)}`),
  });
  return { clock, api, informer, events, lines };
}

describe("Informer", () => {
  it("lists, reports each object as added, then watches from the list's resourceVersion with bookmarks", async () => {
    const { api, informer, events, clock } = setup();
    api.lists.push(listOf("100", deployment("a", "90"), deployment("b", "95")));
    assert.equal(informer.staleness(), Infinity);
    informer.start();
    await informer.waitForSync();
    await settle();
    assert.equal(informer.hasSynced(), true);
    assert.deepEqual(events, ["add a@90", "add b@95"]);
    assert.equal(informer.store.get("ns/a")?.kind, "Deployment", "list items get their kind back");
    const watch = api.lastWatch;
    assert.ok(watch);
    assert.equal(watch.options.resourceVersion, "100");
    assert.equal(watch.options.allowWatchBookmarks, true);
    assert.equal(watch.options.timeoutSeconds, 300);
    assert.equal(informer.staleness(), 0);
    await clock.advance(1);
    await informer.stop();
  });

  it("applies watch events to the store and handlers, and follows bookmarks without notifying", async () => {
    const { api, informer, events } = setup();
    api.lists.push(listOf("100", deployment("a", "90")));
    informer.start();
    await settle();
    const watch = api.lastWatch!;
    watch.send("MODIFIED", deployment("a", "101"));
    watch.send("ADDED", deployment("c", "102"));
    watch.send("DELETED", deployment("a", "103"));
    watch.send("BOOKMARK", { apiVersion: "apps/v1", kind: "Deployment", metadata: { resourceVersion: "150" } });
    await settle();
    assert.deepEqual(events, ["add a@90", "update a@90->a@101", "add c@102", "delete a@103"]);
    assert.deepEqual([...informer.store.keys()], ["ns/c"]);
    assert.equal(informer.lastResourceVersion, "150");
    await informer.stop();
  });

  it("tells handlers which adds came with its first list (the cache filling), and none after, a relist's included", async () => {
    const { api, informer } = setup();
    const adds: string[] = [];
    informer.addHandlers({ onAdd: (o, initialList) => adds.push(`${o.metadata.name} ${initialList}`) });
    api.lists.push(listOf("100", deployment("a", "90")));
    informer.start();
    await settle();
    api.lastWatch!.send("ADDED", deployment("b", "101"));
    await settle();
    // WHEN the watch expires and the relist brings an object created meanwhile
    api.lists.push(listOf("450", deployment("a", "90"), deployment("b", "101"), deployment("c", "440")));
    api.lastWatch!.fail(new GoneError(410, "too old resource version: 101 (450)", "Expired"));
    await settle();
    // THEN only the first list's object was flagged: c is news the operator has not seen
    assert.deepEqual(adds, ["a true", "b false", "c false"]);
    await informer.stop();
  });

  it(
    "syncs from a list page of 200,000 items (the watch cache sends its first page whole, whatever the limit)",
    { timeout: 60_000 },
    async () => {
      const { api, informer } = setup();
      // As listOf makes it (items without apiVersion and kind), built without spreading 200,000 arguments.
      const items = Array.from({ length: 200_000 }, (_, n) => listOf("", deployment(`d${n}`, String(n + 1))).items[0]!);
      api.lists.push({ metadata: { resourceVersion: "300000" }, items });
      informer.start();
      await informer.waitForSync();
      assert.equal(informer.hasSynced(), true);
      assert.equal(informer.store.size, 200_000);
      await informer.stop();
    },
  );

  it("restarts a watch the server closed at once, from the last resourceVersion, without relisting", async () => {
    const { api, informer, clock } = setup();
    api.lists.push(listOf("100"));
    informer.start();
    await settle();
    await clock.advance(60_000);
    const first = api.lastWatch!;
    first.send("ADDED", deployment("a", "120"));
    first.send("BOOKMARK", { apiVersion: "apps/v1", kind: "Deployment", metadata: { resourceVersion: "130" } });
    first.close();
    await settle();
    // no clock advance: the new watch is already there
    assert.equal(api.watches.length, 2);
    assert.equal(api.lastWatch?.options.resourceVersion, "130");
    assert.equal(api.listCalls, 1);
    await informer.stop();
  });

  it("jitters the server-side watch timeout between 1x and 2x the minimum", async () => {
    const { api, informer } = setup({ random: () => 0.75, minWatchTimeoutSeconds: 300 });
    api.lists.push(listOf("1"));
    informer.start();
    await settle();
    assert.equal(api.lastWatch?.options.timeoutSeconds, 525);
    await informer.stop();
  });

  it("relists on 410 Gone and reports what changed while it was not watching", async () => {
    const { api, informer, events } = setup();
    api.lists.push(listOf("100", deployment("a", "90"), deployment("b", "91")));
    api.lists.push(listOf("500", deployment("a", "90"), deployment("b", "400"), deployment("c", "450")));
    informer.start();
    await settle();
    api.lastWatch!.fail(new GoneError(410, "too old resource version: 100 (450)", "Expired"));
    await settle();
    assert.equal(api.listCalls, 2);
    assert.deepEqual(events.slice(2), ["update b@91->b@400", "add c@450"]);
    assert.equal(api.lastWatch?.options.resourceVersion, "500");
    // and a relist that lacks an object reports its deletion
    api.lists.push(listOf("600", deployment("c", "450")));
    api.lastWatch!.fail(new GoneError(410, "expired", "Expired"));
    await settle();
    assert.deepEqual(events.slice(4), ["delete a@90", "delete b@400"]);
    await informer.stop();
  });

  it("lists in pages, the first time from the watch cache (resourceVersion 0), after a 410 consistently", async () => {
    const { api, informer, events } = setup({ pageSize: 2 });
    api.lists.push({ ...listOf("100", deployment("a", "90"), deployment("b", "91")), metadata: { continue: "t1" } });
    api.lists.push(listOf("100", deployment("c", "92")));
    informer.start();
    await informer.waitForSync();
    await settle();
    assert.deepEqual(events, ["add a@90", "add b@91", "add c@92"]);
    assert.deepEqual(api.listOptions, [
      { limit: 2, resourceVersion: "0" },
      { limit: 2, continue: "t1" },
    ]);
    assert.equal(api.lastWatch?.options.resourceVersion, "100");
    api.lists.push(listOf("500", deployment("a", "90")));
    api.lastWatch!.fail(new GoneError(410, "expired", "Expired"));
    await settle();
    assert.deepEqual(api.listOptions[2], { limit: 2 }, "a relist after 410 is a consistent read");
    await informer.stop();
  });

  it("resumes the watch after 429 and 5xx errors, without relisting", async () => {
    const { api, informer, clock } = setup();
    api.lists.push(listOf("100"));
    informer.start();
    await settle();
    api.lastWatch!.send("ADDED", deployment("a", "110"));
    api.lastWatch!.fail(new TooManyRequestsError(429, "too many requests", "TooManyRequests"));
    await settle();
    await clock.advance(200);
    assert.equal(api.lastWatch?.options.resourceVersion, "110");
    api.lastWatch!.fail(new ServerError(500, "etcd leader changed", "InternalError"));
    await settle();
    await clock.advance(400);
    assert.equal(api.watches.length, 3);
    assert.equal(api.lastWatch?.options.resourceVersion, "110");
    assert.equal(api.listCalls, 1, "no relist");
    await informer.stop();
  });

  it("stores objects without managedFields or kubectl's last-applied annotation", async () => {
    const { api, informer } = setup();
    const heavy = (name: string, rv: string) => ({
      ...deployment(name, rv),
      metadata: {
        ...deployment(name, rv).metadata,
        managedFields: [{ manager: "kubectl" }],
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}", keep: "me" },
      },
    });
    api.lists.push(listOf("100", heavy("a", "90")));
    informer.start();
    await settle();
    api.lastWatch!.send("ADDED", heavy("b", "101"));
    await settle();
    for (const name of ["a", "b"]) {
      const stored = informer.store.get(`ns/${name}`)!;
      assert.equal(stored.metadata.managedFields, undefined);
      assert.deepEqual(stored.metadata.annotations, { keep: "me" });
    }
    await informer.stop();
  });

  it("backs off after a transport error and resumes the watch where it was", async () => {
    const { api, informer, clock, lines } = setup();
    api.lists.push(listOf("100"));
    informer.start();
    await settle();
    api.lastWatch!.send("ADDED", deployment("a", "110"));
    api.lastWatch!.fail(new TransportError(0, "socket hang up"));
    await settle();
    assert.equal(api.watches.length, 1, "waits before retrying");
    await clock.advance(200);
    assert.equal(api.watches.length, 2);
    assert.equal(api.lastWatch?.options.resourceVersion, "110");
    assert.equal(api.listCalls, 1);
    api.lastWatch!.fail(new TransportError(0, "connect ECONNREFUSED"));
    await clock.advance(399);
    assert.equal(api.watches.length, 2, "the second retry waits twice as long");
    await clock.advance(1);
    assert.equal(api.watches.length, 3);
    assert.ok(lines.some((l) => l.msg === "list/watch failed" && l.retryInMs === 200));
    await informer.stop();
  });

  it("while the apiserver is away, retries at most 5 s apart, so the cache is current within seconds of its return", async () => {
    // GIVEN a watching informer whose apiserver then refuses every watch for 3 minutes
    const { api, informer, clock } = setup();
    api.lists.push(listOf("100"));
    informer.start();
    await settle();
    const attempts: number[] = [];
    api.onWatch = (watch) => {
      attempts.push(clock.monotonicMs());
      watch.fail(new ServerError(503, "the server is currently unable to handle the request"));
    };
    api.lastWatch!.fail(new TransportError(0, "connection reset"));
    await clock.advance(180_000);
    // THEN the retries back off 200 ms, 400 ms, ... but never wait more than 5 s (client-go waits up to 30 s)
    const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
    assert.equal(Math.max(...gaps), 5_000);
    // WHEN it answers again, the next watch is at most 5 s away
    api.onWatch = undefined;
    const back = clock.monotonicMs();
    await clock.advance(5_000);
    assert.ok(api.watches.length > attempts.length + 1, "a watch is open again");
    assert.ok(informer.disconnectedFor() === 0 && clock.monotonicMs() - back <= 5_000);
    await informer.stop();
  });

  it("caps the reconnect backoff by the number of informers: at least 5 s, 250 ms each, at most 30 s", () => {
    assert.equal(reconnectBackoffCapMs(1), 5_000);
    assert.equal(reconnectBackoffCapMs(20), 5_000);
    assert.equal(reconnectBackoffCapMs(40), 10_000);
    assert.equal(reconnectBackoffCapMs(500), 30_000);
  });

  it("retries a failed list with backoff and only then reports synced", async () => {
    const { api, informer, clock } = setup();
    api.lists.push(new ForbiddenError(403, 'deployments.apps is forbidden: User "op" cannot list', "Forbidden"));
    api.lists.push(listOf("7", deployment("a", "5")));
    informer.start();
    await settle();
    assert.equal(informer.hasSynced(), false);
    assert.equal(informer.staleness(), Infinity);
    await clock.advance(200);
    assert.equal(informer.hasSynced(), true);
    assert.equal(api.listCalls, 2);
    await informer.stop();
  });

  it("says once, without a stack trace, that a kind is not served (its CRD not installed yet), then lists it", async () => {
    const { api, informer, clock, lines } = setup();
    for (let i = 0; i < 3; i++) api.lists.push(new NotFoundError(404, "404 page not found", "NotFound"));
    api.lists.push(listOf("7", deployment("a", "5")));
    informer.start();
    await settle();
    for (const step of [200, 400, 800]) await clock.advance(step);
    assert.equal(informer.hasSynced(), true);
    const said = lines.filter((line) => /does not serve apps\/v1 Deployment/.test(JSON.stringify(line)));
    assert.equal(said.length, 1, JSON.stringify(lines));
    assert.doesNotMatch(JSON.stringify(said[0]), /stack/);
    await informer.stop();
  });

  it("replaces a watch that stays silent past the idle timeout, from the same resourceVersion", async () => {
    const { api, informer, clock } = setup({ idleTimeoutMs: 150_000 });
    api.lists.push(listOf("100"));
    informer.start();
    await settle();
    await clock.advance(100_000);
    api.lastWatch!.send("BOOKMARK", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { resourceVersion: "140" },
    });
    await settle();
    assert.equal(informer.staleness(), 0, "a bookmark proves the watch alive");
    await clock.advance(149_999);
    assert.equal(api.watches.length, 1);
    await clock.advance(1);
    assert.equal(api.watches[0]?.ended, true, "the silent watch was aborted");
    assert.equal(api.watches.length, 2);
    assert.equal(api.lastWatch?.options.resourceVersion, "140");
    assert.equal(informer.staleness(), 150_000);
    await informer.stop();
  });

  it("does not spin when the server ends every watch at once", async () => {
    const { api, informer, clock } = setup();
    api.lists.push(listOf("100"));
    informer.start();
    await settle();
    api.lastWatch!.close();
    await settle();
    assert.equal(api.watches.length, 1);
    await clock.advance(1000);
    assert.equal(api.watches.length, 2);
    await informer.stop();
  });

  it("keeps delivering to other handlers when one throws", async () => {
    const { api, informer, events, lines } = setup();
    informer.addHandlers({
      onAdd: () => {
        throw new Error("handler bug");
      },
    });
    api.lists.push(listOf("1", deployment("a", "1"), deployment("b", "1")));
    informer.start();
    await settle();
    assert.deepEqual(events, ["add a@1", "add b@1"]);
    assert.equal(lines.filter((l) => l.msg === "informer handler failed").length, 2);
    await informer.stop();
  });

  it("stop ends the watch and the loop; the store stays readable", async () => {
    const { api, informer } = setup();
    api.lists.push(listOf("1", deployment("a", "1")));
    informer.start();
    await settle();
    await informer.stop();
    assert.equal(api.lastWatch?.ended, true);
    assert.equal(api.watches.length, 1);
    assert.equal(informer.store.size, 1);
  });
});

describe("Informer readiness: connected, not recently heard from", () => {
  it("a quiet informer stays ready: its watch is open, with no events and no bookmarks, for an hour", async () => {
    // GIVEN a synced informer whose resource never changes, on an apiserver that sends no bookmarks
    const { api, informer, clock } = setup({ idleTimeoutMs: 150_000 });
    api.lists.push(listOf("100", deployment("a", "90")));
    const readiness = informerReadiness(informer, 300_000);
    informer.start();
    await settle();
    // WHEN an hour passes (the idle watchdog replaces the silent watch every 150 s; each new one is accepted)
    for (let minute = 1; minute <= 60; minute++) {
      await clock.advance(60_000);
      // THEN it is ready all along, without a relist
      const { ok, detail } = readiness.check();
      assert.equal(ok, true, `minute ${minute}: ${detail}`);
    }
    assert.match(readiness.check().detail, /^watching, heard 3600s ago$/);
    assert.ok(informer.staleness() >= 3_600_000, "nothing was heard: recency alone would call it unready");
    assert.equal(api.listCalls, 1);
    assert.ok(api.watches.length >= 20, `the silent watch was replaced (${api.watches.length} watches)`);
    await informer.stop();
  });

  it("a watch the apiserver keeps refusing turns unready past the threshold, and ready once one is accepted", async () => {
    // GIVEN a synced informer with an open watch
    const { api, informer, clock } = setup();
    api.lists.push(listOf("100"));
    const readiness = informerReadiness(informer, 300_000);
    informer.start();
    await settle();
    assert.equal(informer.disconnectedFor(), 0);
    // WHEN the connection breaks and every new watch fails before the apiserver answers
    api.answerWatches = false;
    api.onWatch = (watch) => watch.fail(new TransportError(0, "connect ECONNREFUSED"));
    api.lastWatch!.fail(new TransportError(0, "socket hang up"));
    await settle();
    // THEN it stays ready while it retries within the threshold (backing off to 30 s)...
    await clock.advance(299_000);
    assert.deepEqual(readiness.check(), { ok: true, detail: "reconnecting, heard 299s ago" });
    assert.ok(api.watches.length > 5, `it kept retrying (${api.watches.length} watches)`);
    // ...and turns unready beyond it, saying why
    await clock.advance(2_000);
    assert.deepEqual(readiness.check(), {
      ok: false,
      detail: "no watch accepted by the apiserver for 301s, heard 301s ago",
    });
    // AND ready again as soon as a watch is accepted, without waiting for an event
    api.answerWatches = true;
    api.onWatch = undefined;
    await clock.advance(30_000);
    assert.equal(informer.disconnectedFor(), 0);
    assert.equal(readiness.check().ok, true);
    assert.equal(api.listCalls, 1, "resumed, never relisted");
    await informer.stop();
  });

  it("a watch request that never gets an answer counts as disconnected, even while the idle watchdog replaces it", async () => {
    // GIVEN a synced informer whose apiserver accepts connections but never answers a watch
    const { api, informer, clock } = setup({ idleTimeoutMs: 150_000 });
    api.lists.push(listOf("100"));
    api.answerWatches = false;
    const readiness = informerReadiness(informer, 300_000);
    informer.start();
    await settle();
    // WHEN more than the threshold passes
    await clock.advance(299_000);
    assert.equal(readiness.check().ok, true);
    await clock.advance(2_000);
    // THEN it is unready
    assert.equal(readiness.check().ok, false);
    assert.equal(api.watches.length, 3, "the unanswered watch was replaced at 150 s and 300 s");
    await informer.stop();
  });
});
