/**
 * An informer's namespace limit (operator/runtime/informer.ts, NamespaceLimit): anyone who may create an object in
 * a namespace may give it the label the operator watches, and the cache keeps each such object's identity. A
 * namespace past its limit of objects no owner keeps is no longer cached (its readers go to the apiserver), its
 * events still wake their owners, and it is cached again once a relist finds it within the limit.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../kube/client.ts";
import { InformerCache } from "../../../operator/runtime/cache.ts";
import { Informer } from "../../../operator/runtime/informer.ts";
import { captureLogger } from "./capture-logger.ts";
import { FakeClock, settle } from "./fake-clock.ts";
import { FakeListWatch, listOf } from "./fake-list-watch.ts";

/** A ConfigMap in `namespace`; `forged` ones are what the limit counts (kept in part: no owner keeps them). */
function configMap(namespace: string, name: string, resourceVersion: string, forged = true): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, resourceVersion, labels: { kept: forged ? "part" : "whole" } },
  };
}

function setup(maxObjects: number) {
  const clock = new FakeClock();
  const api = new FakeListWatch();
  const { logger, lines } = captureLogger();
  const informer = new Informer({
    client: api.client,
    apiVersion: "v1",
    kind: "ConfigMap",
    logger,
    clock,
    random: () => 0,
    idleTimeoutMs: 24 * 3_600_000, // the tests move the clock by minutes: no watch goes idle meanwhile
    namespaceLimit: { maxObjects, counts: (object) => object.metadata.labels?.["kept"] === "part" },
  });
  const events: string[] = [];
  informer.addHandlers({
    onAdd: (o, initialList) =>
      events.push(`add ${o.metadata.namespace}/${o.metadata.name}${initialList ? " (list)" : ""}`),
    onUpdate: (_old, o) => events.push(`update ${o.metadata.namespace}/${o.metadata.name}`),
    onDelete: (o) => events.push(`delete ${o.metadata.namespace}/${o.metadata.name}`),
  });
  const cache = new InformerCache([informer], clock);
  return { api, informer, events, lines, cache, clock };
}

const namesIn = (informer: Informer, namespace: string) =>
  [...informer.store.keys()].filter((key) => key.startsWith(`${namespace}/`)).sort();

describe("Informer namespace limit", () => {
  it("stops caching a namespace past its limit, still tells its events, and leaves the others cached", async () => {
    const { api, informer, events, lines, cache } = setup(2);
    api.lists.push(listOf("10", configMap("tenant", "a", "1"), configMap("other", "x", "2")));
    informer.start();
    await settle();
    const watch = api.lastWatch!;
    // Objects an owner keeps whole do not count
    watch.send("ADDED", configMap("tenant", "whole", "11", false));
    watch.send("ADDED", configMap("tenant", "b", "12"));
    await settle();
    assert.equal(cache.covers("v1", "ConfigMap", "tenant"), true, "two counted: at the limit, not past it");

    // WHEN a third forged object comes
    watch.send("ADDED", configMap("tenant", "c", "13"));
    await settle();
    // THEN the namespace is forgotten, readers go live there, the others stay cached
    assert.deepEqual(namesIn(informer, "tenant"), []);
    assert.equal(cache.covers("v1", "ConfigMap", "tenant"), false);
    assert.equal(cache.get("v1", "ConfigMap", "a", "tenant"), undefined);
    assert.equal(cache.covers("v1", "ConfigMap", "other"), true);
    assert.equal(cache.get("v1", "ConfigMap", "x", "other")?.metadata.name, "x");
    assert.deepEqual(informer.uncachedNamespaces(), ["tenant"]);
    assert.ok(lines.some((line) => line.msg?.includes("namespace past its limit") && line.namespace === "tenant"));
    // AND the forgetting told no handler of a deletion (the objects still exist)
    assert.deepEqual(events.splice(0), [
      "add tenant/a (list)",
      "add other/x (list)",
      "add tenant/whole",
      "add tenant/b",
      "add tenant/c",
    ]);

    // WHEN more events come for the namespace: each is still told, none stored
    watch.send("MODIFIED", configMap("tenant", "whole", "14", false));
    watch.send("ADDED", configMap("tenant", "d", "15"));
    watch.send("DELETED", configMap("tenant", "a", "16"));
    await settle();
    assert.deepEqual(events.splice(0), ["update tenant/whole", "add tenant/d", "delete tenant/a"]);
    assert.deepEqual(namesIn(informer, "tenant"), []);
    assert.equal(api.listCalls, 1, "no relist until the watch is renewed");
    await informer.stop();
  });

  it("counts again at renewals of the watch, less often while past, and caches it again once within", async () => {
    const { api, informer, events, cache, clock } = setup(2);
    api.lists.push(listOf("10", configMap("tenant", "a", "1"), configMap("tenant", "b", "2")));
    informer.start();
    await settle();
    api.lastWatch!.send("ADDED", configMap("tenant", "c", "11"));
    await settle();
    assert.equal(cache.covers("v1", "ConfigMap", "tenant"), false);
    events.splice(0);

    // WHEN the server ends the watch while the namespace still has three
    api.lists.push(
      listOf("20", configMap("tenant", "a", "1"), configMap("tenant", "b", "2"), configMap("tenant", "c", "11")),
    );
    api.lastWatch!.close();
    await settle();
    // THEN the relist counted it again, kept none of it and told nothing
    assert.equal(api.listCalls, 2);
    assert.deepEqual(namesIn(informer, "tenant"), []);
    assert.equal(cache.covers("v1", "ConfigMap", "tenant"), false);
    assert.deepEqual(events, []);
    assert.equal(api.lastWatch?.options.resourceVersion, "20");

    // WHEN one is deleted and the watch is renewed again at once THEN no relist: it counts again 10 minutes after
    // the last list
    api.lastWatch!.send("DELETED", configMap("tenant", "c", "21"));
    api.lastWatch!.close();
    await settle();
    assert.equal(api.listCalls, 2);
    assert.equal(cache.covers("v1", "ConfigMap", "tenant"), false);
    // WHEN the watch is renewed 10 minutes after the last list
    await clock.advance(10 * 60_000);
    api.lists.push(listOf("30", configMap("tenant", "a", "1"), configMap("tenant", "b", "2")));
    api.lastWatch!.close();
    await settle();
    // THEN the namespace is cached again, its objects told as the cache filling (low priority), not as news
    assert.equal(api.listCalls, 3);
    assert.equal(cache.covers("v1", "ConfigMap", "tenant"), true);
    assert.deepEqual(namesIn(informer, "tenant"), ["tenant/a", "tenant/b"]);
    assert.deepEqual(events, ["delete tenant/c", "add tenant/a (list)", "add tenant/b (list)"]);
    assert.deepEqual(informer.uncachedNamespaces(), []);

    // AND with no namespace past its limit, a renewal resumes the watch without a relist
    api.lastWatch!.close();
    await settle();
    assert.equal(api.listCalls, 3);
    assert.equal(api.lastWatch?.options.resourceVersion, "30");
    await informer.stop();
  });

  it("keeps nothing of a namespace a list finds past its limit, and does not report its cached objects deleted", async () => {
    const { api, informer, events, cache } = setup(3);
    api.lists.push(listOf("10", configMap("tenant", "a", "1"), configMap("other", "x", "2")));
    informer.start();
    await settle();
    events.splice(0);
    // WHEN the watch expires and the relist finds a flood
    const flood = Array.from({ length: 50 }, (_, n) => configMap("tenant", `f${n}`, String(100 + n)));
    api.lists.push(listOf("200", configMap("tenant", "a", "1"), ...flood, configMap("other", "x", "2")));
    const { GoneError } = await import("../../../kube/errors.ts");
    api.lastWatch!.fail(new GoneError(410, "too old resource version", "Expired"));
    await settle();
    // THEN the namespace is not cached, the other is, and nothing was told of the tenant's objects
    assert.equal(informer.store.size, 1);
    assert.equal(cache.covers("v1", "ConfigMap", "tenant"), false);
    assert.equal(cache.get("v1", "ConfigMap", "x", "other")?.metadata.name, "x");
    assert.deepEqual(events, []);
    await informer.stop();
  });
});
