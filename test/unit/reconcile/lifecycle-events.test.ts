/** Which Normal lifecycle event each change tells, as pure functions of the change (no cluster). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MyAppInstanceStatus } from "../../../api/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import { changedEvent, createdEvent, statusEvents } from "../../../operator/reconcile/lifecycle-events.ts";
import { computeStatus, type ObservedWorkload, type StatusInput } from "../../../operator/reconcile/index.ts";

const now = new Date("2030-01-01T00:00:00Z");
const spec = { replicas: 3, image: "nginx:1.28", port: 8080, storageReclaimPolicy: "Retain" as const };
const observed = { countsObserved: true };

function child(kind: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: kind === "Service" ? "v1" : "apps/v1", kind, metadata: { name, namespace: "shop" }, spec };
}

/** A Deployment whose controller has seen its template and reports these counts. */
function deployment(image: string, counts: { updated: number; ready: number; replicas?: number }): ObservedWorkload {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop", generation: 2 },
    spec: { replicas: 3, template: { spec: { containers: [{ name: "app", image }] } } },
    status: {
      observedGeneration: 2,
      replicas: counts.replicas ?? 3,
      updatedReplicas: counts.updated,
      readyReplicas: counts.ready,
      availableReplicas: counts.ready,
    },
  };
}

/** The status status.ts computes for `workload` after `previous`: the events are read from its very words. */
function status(previous: MyAppInstanceStatus | undefined, workload: ObservedWorkload): MyAppInstanceStatus {
  const input: StatusInput = {
    generation: 2,
    spec,
    previous,
    selector: "app.kubernetes.io/instance=web",
    workload,
  };
  return computeStatus(input, now);
}

describe("createdEvent", () => {
  it("is one event for every child a reconcile created, Services first", () => {
    assert.deepEqual(createdEvent([child("StatefulSet", "db"), child("Service", "db-pods"), child("Service", "db")]), {
      reason: "Created",
      note: "Created Service db, Service db-pods and StatefulSet db",
    });
    assert.equal(createdEvent([child("Service", "web")])?.note, "Created Service web");
  });

  it("is none when nothing was created", () => {
    assert.equal(createdEvent([]), undefined);
  });
});

describe("changedEvent", () => {
  const template = { template: { spec: { containers: [{ name: "app", image: "nginx:1.27" }] } } };

  it("is Scaled with both counts when the replica count is all that changes", () => {
    const live = child("Deployment", "web", { replicas: 2, ...template });
    const desired = child("Deployment", "web", { replicas: 3, ...template });
    assert.deepEqual(changedEvent(desired, live), {
      reason: "Scaled",
      note: "Scaled Deployment web from 2 to 3 replicas",
    });
  });

  it("is Updated when anything else changes too", () => {
    const live = child("Deployment", "web", { replicas: 2, ...template });
    const desired = child("Deployment", "web", {
      replicas: 3,
      template: { spec: { containers: [{ name: "app", image: "nginx:1.28" }] } },
    });
    assert.deepEqual(changedEvent(desired, live), {
      reason: "Updated",
      note: "Updated Deployment web to match the spec",
    });
    assert.equal(
      changedEvent(child("Service", "web", { ports: [{ port: 80 }] }), child("Service", "web"))?.reason,
      "Updated",
    );
  });
});

describe("statusEvents", () => {
  // GIVEN an instance Ready on nginx:1.27 whose image changes to nginx:1.28
  const running = computeStatus(
    {
      generation: 1,
      spec: { ...spec, image: "nginx:1.27" },
      previous: undefined,
      selector: "app.kubernetes.io/instance=web",
      workload: { ...deployment("nginx:1.27", { updated: 3, ready: 3 }), metadata: { name: "web", generation: 1 } },
    },
    now,
  );
  const started = status(running, deployment("nginx:1.28", { updated: 0, ready: 3, replicas: 3 }));
  const oneUpdated = status(started, deployment("nginx:1.28", { updated: 1, ready: 3, replicas: 4 }));
  const oneUpdatedFewerReady = status(oneUpdated, deployment("nginx:1.28", { updated: 1, ready: 2, replicas: 4 }));
  const done = status(oneUpdatedFewerReady, deployment("nginx:1.28", { updated: 3, ready: 3 }));

  it("tells a rollout's progress each time more replicas run the new image, in status.ts's words", () => {
    assert.deepEqual(statusEvents(running, started, observed), [], "nothing updated yet");
    assert.deepEqual(statusEvents(started, oneUpdated, observed), [
      { reason: "RollingOut", note: "Rolling out nginx:1.28: 1/3 replicas updated" },
    ]);
    assert.deepEqual(statusEvents(oneUpdated, oneUpdatedFewerReady, observed), [], "only the ready count moved");
  });

  it("tells no progress from counts the workload controller has not reported for the new template", () => {
    assert.deepEqual(statusEvents(started, oneUpdated, { countsObserved: false }), []);
  });

  it("tells the end of a rollout as RolloutComplete, not also Ready", () => {
    assert.equal(done.image, "nginx:1.28", "precondition: the rollout is complete");
    assert.deepEqual(statusEvents(oneUpdatedFewerReady, done, observed), [
      { reason: "RolloutComplete", note: "nginx:1.28 is rolled out: 3/3 replicas ready" },
    ]);
  });

  it("tells Ready when Ready turns True again, with the status's message, and never while it stays True", () => {
    const lost = status(done, deployment("nginx:1.28", { updated: 3, ready: 2 }));
    assert.equal(lost.conditions?.find((c) => c.type === "Ready")?.status, "False", "precondition: a replica is lost");
    const back = status(lost, deployment("nginx:1.28", { updated: 3, ready: 3 }));
    assert.deepEqual(statusEvents(lost, back, observed), [
      { reason: "Ready", note: "3/3 replicas ready, running nginx:1.28" },
    ]);
    assert.deepEqual(statusEvents(back, { ...back, lastHandledReconcileAt: "x" }, observed), []);
  });

  it("tells no Ready for a new instance's first Ready: its Created event and the Ready condition tell it", () => {
    const creating = status(undefined, deployment("nginx:1.28", { updated: 3, ready: 0 }));
    assert.equal(creating.image, undefined, "precondition: nothing rolled out yet");
    const first = status(creating, deployment("nginx:1.28", { updated: 3, ready: 3 }));
    assert.equal(first.conditions?.find((c) => c.type === "Ready")?.status, "True");
    assert.deepEqual(statusEvents(creating, first, observed), []);
    assert.deepEqual(statusEvents(undefined, first, observed), []);
  });
});
