/**
 * The one count of a reconcile's writes: the session's counting client adds each write asked for to the tally the
 * runtime hands the reconcile (operator/runtime/controller.ts logs it on the reconcile's line).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pino } from "pino";
import { InvalidError } from "../../../kube/index.ts";
import { reconciler } from "../../../operator/reconcile/index.ts";
import { countingClient, openSession, type InstanceObject } from "../../../operator/reconcile/session.ts";
import { FakeClock } from "../runtime/fake-clock.ts";
import { FakeCluster } from "./fake-cluster.ts";
import { harness } from "./setup.ts";

const service = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "default" },
  spec: { ports: [{ port: 80 }] },
};

describe("countingClient", () => {
  it("adds one per write asked for, events included, and nothing for reads", async () => {
    const cluster = new FakeCluster();
    const instance = cluster.createInstance("web", { image: "nginx:1.27" });
    const writes = { count: 0 };
    const counted = countingClient(cluster, writes);

    await counted.find("v1", "Service", "web", "default");
    await counted.list("v1", "Service", "default", "app=web");
    assert.equal(writes.count, 0, "reads are free");

    await counted.apply(service);
    await counted.setFinalizers(
      { name: "web", namespace: "default", resourceVersion: instance.metadata.resourceVersion ?? "", finalizers: [] },
      ["example.com/finalizer"],
    );
    await counted.applyStatus({ name: "web", namespace: "default" }, { phase: "Pending" });
    await counted.emitEvent({
      type: "Normal",
      reason: "Created",
      action: "Apply",
      note: "Created Service web",
      regarding: { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "web", namespace: "default" },
    });
    await counted.delete("v1", "Service", "web", "default", { propagationPolicy: "Background" });
    assert.equal(writes.count, 5);
    assert.equal(writes.count, cluster.allWrites().length, "one per request the cluster saw");
  });

  it("counts a write the apiserver refuses: it was asked for", async () => {
    const cluster = new FakeCluster();
    cluster.failNext("apply", new InvalidError(422, "quota exceeded"), "Service");
    const writes = { count: 0 };

    await assert.rejects(countingClient(cluster, writes).apply(service), InvalidError);
    assert.equal(writes.count, 1);
  });
});

describe("openSession", () => {
  it("counts into the tally it is given, which session.writes() reads", async () => {
    const cluster = new FakeCluster();
    const instance = cluster.createInstance("web", { image: "nginx:1.27" }) as InstanceObject;
    const writes = { count: 3 };
    const session = openSession(
      cluster,
      { namespace: "default", name: "web" },
      instance,
      pino({ level: "silent" }),
      new FakeClock(0),
      {},
      writes,
    );

    await session.event("Normal", "Created", "Apply", "Created Service web");
    await session.cluster.apply(service);
    assert.equal(writes.count, 5, "the tally the runtime handed in, not a copy");
    assert.equal(session.writes(), 5);
  });
});

describe("reconciler", () => {
  it("names what a first reconcile changed, one phrase per write but the event, for the runtime's line", async () => {
    const h = harness();
    h.cluster.createInstance("web", { image: "nginx:1.27", replicas: 2 });
    const tally = { count: 0, changes: [] as string[] };
    await reconciler(h.deps)({ namespace: "default", name: "web" }, { writes: tally });
    assert.deepEqual([...tally.changes].sort(), ["Deployment/web created", "Service/web created", "status Pending"]);
    assert.equal(tally.count, tally.changes.length + 1, "the Created event is the one write without a phrase");
  });
  it("counts the reconcile's writes in the tally the runtime hands it; a converged reconcile adds none", async () => {
    const h = harness();
    h.cluster.createInstance("web", { image: "nginx:1.27", replicas: 2, counted: 8080 });
    const reconcile = reconciler(h.deps);

    const created = { count: 0 };
    assert.deepEqual(await reconcile({ namespace: "default", name: "web" }, { writes: created }), {});
    assert.equal(created.count, h.cluster.allWrites().length);
    assert.ok(created.count > 0);

    const converged = { count: 0 };
    await reconcile({ namespace: "default", name: "web" }, { writes: converged });
    assert.equal(converged.count, 0);
  });
});
