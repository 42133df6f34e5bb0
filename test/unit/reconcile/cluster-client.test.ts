import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeClient, KubeObject } from "../../../kube/index.ts";
import { isContentWithheld, withheld } from "../../../operator/chart/index.ts";
import { fieldManager, clusterClient, type EventRecord } from "../../../operator/reconcile/index.ts";
import { FakeClock } from "../runtime/fake-clock.ts";

/** A KubeClient stand-in that records the calls clusterClient makes. */
function recordingClient(options: { failCreate?: Error } = {}) {
  const calls: { method: string; args: unknown[] }[] = [];
  const record =
    (method: string, result: unknown = {}) =>
    async (...args: unknown[]) => {
      calls.push({ method, args });
      return result;
    };
  const client = {
    find: record("find", undefined),
    // Live lists are read item by item (operator/reconcile/live-lists.ts); recorded as "list" with what selects.
    async listEach(
      apiVersion: string,
      kind: string,
      options: unknown,
      each: (item: KubeObject, length: number) => unknown,
    ) {
      calls.push({ method: "list", args: [apiVersion, kind, options] });
      const items = [{ apiVersion, kind, metadata: { name: "data-0" } }];
      return { metadata: {}, items: items.map((item) => each(item, JSON.stringify(item).length)), oversized: 0 };
    },
    apply: record("apply"),
    mergePatch: record("mergePatch"),
    jsonPatch: record("jsonPatch"),
    delete: record("delete", true),
    async create(...args: unknown[]) {
      calls.push({ method: "create", args });
      if (options.failCreate) throw options.failCreate;
      return {};
    },
  };
  return { client: client as unknown as KubeClient, calls };
}

const event: EventRecord = {
  type: "Normal",
  reason: "Created",
  action: "Apply",
  note: "Created Deployment web",
  regarding: { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "web", namespace: "shop", uid: "u1" },
};

describe("clusterClient", () => {
  it("applies with the operator's field manager, forcing ownership", async () => {
    const { client, calls } = recordingClient();
    const cluster = clusterClient(client, { events: { record: () => undefined } });
    const object = { apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "shop" } };

    await cluster.apply(object);

    assert.equal(fieldManager, "myapp-operator");
    assert.deepEqual(calls, [{ method: "apply", args: [object, { fieldManager: "myapp-operator", force: true }] }]);
  });

  it("applies status to the status subresource with only name and namespace", async () => {
    const { client, calls } = recordingClient();
    const cluster = clusterClient(client, { events: { record: () => undefined } });

    await cluster.applyStatus({ namespace: "shop", name: "web" }, { phase: "Running" });

    assert.deepEqual(calls[0]?.args, [
      {
        apiVersion: "example.com/v1",
        kind: "MyAppInstance",
        metadata: { name: "web", namespace: "shop" },
        status: { phase: "Running" },
      },
      { fieldManager: "myapp-operator", force: true, subresource: "status" },
    ]);
  });

  it("changes finalizers with a JSON patch of the change alone, at the resourceVersion read (409 when it moved on)", async () => {
    const { client, calls } = recordingClient();
    const cluster = clusterClient(client, { events: { record: () => undefined } });
    const web = { namespace: "shop", name: "web", resourceVersion: "42" };
    const atVersion = { op: "replace", path: "/metadata/resourceVersion", value: "42" };

    // GIVEN a tenant's long list: adding to it or removing from it sends the one finalizer, not the list
    const long = Array.from({ length: 1000 }, (_, i) => `tenant.example.com/f${i}`);
    await cluster.setFinalizers({ ...web, finalizers: long }, [...long, "ours"]);
    await cluster.setFinalizers({ ...web, finalizers: [...long.slice(0, 500), "ours", ...long.slice(500)] }, long);
    // and a list made or replaced whole where it is not one such change
    await cluster.setFinalizers({ ...web, finalizers: [] }, ["ours"]);
    await cluster.setFinalizers({ ...web, finalizers: ["a", "b"] }, ["b", "a"]);

    const operations = calls.map((call) => {
      assert.equal(call.method, "jsonPatch");
      assert.deepEqual(call.args.slice(0, 4), ["example.com/v1", "MyAppInstance", "web", "shop"]);
      return call.args[4];
    });
    assert.deepEqual(operations, [
      [atVersion, { op: "add", path: "/metadata/finalizers/-", value: "ours" }],
      [atVersion, { op: "remove", path: "/metadata/finalizers/500" }],
      [atVersion, { op: "add", path: "/metadata/finalizers", value: ["ours"] }],
      [atVersion, { op: "add", path: "/metadata/finalizers", value: ["b", "a"] }],
    ]);
  });

  it("passes propagation policy and uid precondition on delete; lists by label selector", async () => {
    const { client, calls } = recordingClient();
    const cluster = clusterClient(client, { events: { record: () => undefined } });

    assert.equal(
      await cluster.delete("apps/v1", "StatefulSet", "web", "shop", {
        propagationPolicy: "Orphan",
        preconditionUid: "u9",
      }),
      true,
    );
    const items = await cluster.list("v1", "PersistentVolumeClaim", "shop", "a=b");

    assert.deepEqual(calls[0]?.args, [
      "apps/v1",
      "StatefulSet",
      "web",
      "shop",
      { propagationPolicy: "Orphan", preconditionUid: "u9" },
    ]);
    assert.deepEqual(calls[1]?.args, [
      "v1",
      "PersistentVolumeClaim",
      { namespace: "shop", labelSelector: "a=b", limit: 50 },
    ]);
    assert.equal(items.length, 1);
  });

  it("hands events to the recorder", async () => {
    const { client, calls } = recordingClient();
    const recorded: EventRecord[] = [];
    const cluster = clusterClient(client, { events: { record: (e) => recorded.push(e) } });

    await cluster.emitEvent(event);

    assert.deepEqual(recorded, [event]);
    assert.deepEqual(calls, [], "the recorder writes, not the client");
  });

  it("reads kinds the cache covers from the cache, others live; remembers what it wrote", async () => {
    const { client, calls } = recordingClient();
    const cached = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop" } };
    const wrote: unknown[] = [];
    const cache = {
      covers: (apiVersion: string) => apiVersion === "apps/v1",
      get: <T>() => cached as T,
      list: <T>() => [cached as T],
      wrote: (object: unknown) => wrote.push(object),
    };
    const cluster = clusterClient(client, { cache, events: { record: () => undefined } });

    assert.equal(await cluster.find("apps/v1", "Deployment", "web", "shop"), cached);
    assert.deepEqual(await cluster.list("apps/v1", "Deployment", "shop", "a=b"), [cached]);
    await cluster.find("v1", "Service", "web", "shop");
    await cluster.apply({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop" } });

    assert.deepEqual(
      calls.map((c) => c.method),
      ["find", "apply"],
      "only the uncovered kind and the write reach the client",
    );
    assert.equal(wrote.length, 1, "the apply's answer is remembered");
  });

  it("reads live an object of which the cache kept only its identity (someone made it large)", async () => {
    const { client, calls } = recordingClient();
    const identity = withheld({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "shop" },
    });
    const cache = {
      covers: () => true,
      get: <T>() => identity as T,
      list: <T>() => [identity as T],
      wrote: () => undefined,
    };
    const cluster = clusterClient(client, { cache, events: { record: () => undefined } });

    await cluster.find("apps/v1", "Deployment", "web", "shop");

    assert.deepEqual(calls, [{ method: "find", args: ["apps/v1", "Deployment", "web", "shop"] }]);
  });

  it("keeps of a live list by label what the cache would keep (a namespace it stopped keeping); by field, not", async () => {
    // GIVEN a cache that does not keep namespace shop's ConfigMaps, whose transform keeps identities
    const { client } = recordingClient();
    const cache = {
      covers: () => false,
      get: () => undefined,
      list: () => [],
      wrote: () => undefined,
      keptOf: (_apiVersion: string, kind: string) =>
        kind === "ConfigMap" ? (object: KubeObject) => withheld({ ...object, metadata: { name: "kept" } }) : undefined,
    };
    const cluster = clusterClient(client, { cache, events: { record: () => undefined } });
    // WHEN listed by label THEN each item is as the cache would keep it
    const [byLabel] = await cluster.list<KubeObject>("v1", "ConfigMap", "shop", "a=b");
    assert.equal(byLabel?.metadata.name, "kept");
    assert.ok(byLabel && isContentWithheld(byLabel));
    // AND a list by field (never the cache's to answer) keeps what live-lists.ts keeps
    const [byField] = await cluster.list<KubeObject>("v1", "ConfigMap", "shop", "", "metadata.name=data-0");
    assert.equal(byField?.metadata.name, "data-0");
    // AND a kind the cache does not watch too
    const [unwatched] = await cluster.list<KubeObject>("v1", "Secret", "shop", "a=b");
    assert.equal(unwatched?.metadata.name, "data-0");
  });

  it("reuses a live read of a cluster-scoped kind for clusterReadTtlMs; namespaced and live reads always go out", async () => {
    const { client, calls } = recordingClient();
    const clock = new FakeClock();
    const cluster = clusterClient(client, { events: { record: () => undefined }, clusterReadTtlMs: 10_000, clock });
    const storageClasses = () => cluster.list("storage.k8s.io/v1", "StorageClass", "", "");

    await Promise.all([storageClasses(), storageClasses()]);
    await cluster.find("storage.k8s.io/v1", "StorageClass", "standard");
    await clock.advance(9_999);
    clock.jumpWall(-3_600_000); // an NTP step back: the age of a read is monotonic, it changes nothing
    await storageClasses();
    await cluster.find("storage.k8s.io/v1", "StorageClass", "standard");
    await cluster.find("storage.k8s.io/v1", "StorageClass", "standard", undefined, { live: true });
    await cluster.list("v1", "PersistentVolumeClaim", "shop", "a=b");
    await cluster.list("v1", "PersistentVolumeClaim", "shop", "a=b");
    assert.deepEqual(
      calls.map((c) => c.method),
      ["list", "find", "find", "list", "list"],
      "one list and one get of StorageClasses in 10 s (concurrent reads share one), the live get, both claim lists",
    );

    await clock.advance(1);
    await storageClasses();
    assert.equal(calls.length, 6, "read again once the answer is 10 s old");
  });

  it("forgets a failed cluster-scoped read at once", async () => {
    const { client, calls } = recordingClient();
    let fail = true;
    const failing = {
      ...client,
      async listEach(...args: unknown[]) {
        calls.push({ method: "list", args });
        if (fail) throw new Error("connection refused");
        return { metadata: {}, items: [], oversized: 0 };
      },
    } as unknown as KubeClient;
    const cluster = clusterClient(failing, { events: { record: () => undefined }, clock: new FakeClock() });
    await assert.rejects(cluster.list("storage.k8s.io/v1", "StorageClass", "", ""), /connection refused/);
    fail = false;
    assert.deepEqual(await cluster.list("storage.k8s.io/v1", "StorageClass", "", ""), []);
    assert.equal(calls.length, 2);
  });
});
