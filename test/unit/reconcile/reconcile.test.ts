import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCondition, finalizer, validateStatus } from "../../../api/index.ts";
import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  ServerError,
  TooManyRequestsError,
  TransportError,
  UnauthorizedError,
  type KubeObject,
} from "../../../kube/index.ts";
import { Sightings, PermanentError, TransientError, reconcile } from "../../../operator/reconcile/index.ts";
import { instanceAsRead } from "../../../operator/instance-as-read.ts";
import { unreadableEventsPollMs } from "../../../operator/reconcile/children.ts";
import { LiveListTooLarge } from "../../../operator/reconcile/live-lists.ts";
import { harness } from "./setup.ts";

const spec = { image: "nginx:1.27", replicas: 2, port: 8080 };
/** The key of the instance most tests reconcile. */
const web = { namespace: "default", name: "web" };

/** A StorageClass as an administrator creates it (cluster-scoped). */
function storageClass(name: string, fields: { isDefault?: boolean; allowVolumeExpansion?: boolean } = {}) {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name,
      ...(fields.isDefault ? { annotations: { "storageclass.kubernetes.io/is-default-class": "true" } } : {}),
    },
    provisioner: "example.com/local",
    ...(fields.allowVolumeExpansion !== undefined ? { allowVolumeExpansion: fields.allowVolumeExpansion } : {}),
  };
}

/**
 * An instance that has been created, rolled out and reported Running, in a cluster whose default StorageClass is
 * "standard" (an instance with storage has its claims Bound on it).
 */
async function runningInstance(instanceSpec: Record<string, unknown> = spec) {
  const h = harness();
  h.cluster.put(storageClass("standard", { isDefault: true }));
  h.cluster.createInstance("web", instanceSpec);
  await h.run();
  const kind = instanceSpec["storage"] === undefined ? "Deployment" : "StatefulSet";
  if (kind === "StatefulSet") h.cluster.provisionClaims("web", "standard");
  h.cluster.rollOut(kind, "web");
  await h.run();
  assert.equal(h.cluster.instance("web")?.status?.phase, "Running", "precondition: the instance runs");
  h.cluster.reset();
  return h;
}

/** Every request of the reconcile in order, events included ("event Reason"). */
function requestLines(h: ReturnType<typeof harness>): string[] {
  return h.cluster.allWrites().map((r) => (r.verb === "event" ? `event ${r.name}` : `${r.verb} ${r.kind}/${r.name}`));
}

/** The events recorded since the last reset, as "Reason: note". */
function eventLines(h: ReturnType<typeof harness>): string[] {
  return h.cluster.events.map((e) => `${e.reason}: ${e.note}`);
}

function condition(h: ReturnType<typeof harness>, type: string) {
  return findCondition(h.cluster.instance("web")?.status?.conditions, type);
}

describe("reconcile: create", () => {
  it("applies Service and Deployment and reports Pending, without a finalizer (nothing the collector leaves)", async () => {
    // GIVEN a new instance without storage
    const h = harness();
    h.cluster.createInstance("web", spec);

    // WHEN it is reconciled for the first time
    const outcome = await h.run();

    // THEN exactly these writes happen, in this order: one Created event tells both children (an event is a write);
    // no finalizer, since the garbage collector takes its Deployment and Service
    assert.deepEqual(requestLines(h), [
      "apply Service/web",
      "apply Deployment/web",
      "event Created",
      "applyStatus MyAppInstance/web",
    ]);
    assert.deepEqual(h.cluster.events, [
      {
        type: "Normal",
        reason: "Created",
        action: "Apply",
        note: "Created Service web and Deployment web",
        regarding: {
          apiVersion: "example.com/v1",
          kind: "MyAppInstance",
          name: "web",
          namespace: "default",
          uid: h.cluster.instance("web")?.metadata.uid,
        },
        related: {
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: "web",
          namespace: "default",
          uid: h.cluster.get("apps/v1", "Deployment", "web")?.metadata.uid,
        },
      },
    ]);
    assert.equal(h.cluster.instance("web")?.metadata.finalizers, undefined);
    const status = h.cluster.instance("web")?.status;
    assert.equal(status?.phase, "Pending");
    assert.equal(status?.observedGeneration, 1);
    assert.equal(status?.selector, "app.kubernetes.io/instance=web,app.kubernetes.io/name=myapp");
    assert.equal(status?.image, undefined, "no image is rolled out yet");
    assert.equal(condition(h, "Ready")?.status, "False");
    assert.equal(condition(h, "Progressing")?.status, "True");
    assert.equal(condition(h, "Progressing")?.reason, "Creating");
    assert.equal(condition(h, "Reconciling")?.status, "True");
    assert.equal(condition(h, "Stalled"), undefined);
    assert.equal(outcome.writes, 4, "3 writes and the Created event");
    assert.equal(outcome.requeueAfterMs, undefined, "the Deployment's own events wake us up");
  });

  it("reports Running with Ready=True once the Deployment has rolled out", async () => {
    const h = harness();
    h.cluster.createInstance("web", spec);
    await h.run();
    h.cluster.reset();

    // WHEN the Deployment controller has made every replica ready
    h.cluster.rollOut("Deployment", "web");
    await h.run();

    // THEN only the status changes, with no event: the Created event and the Ready condition tell a new instance
    assert.deepEqual(requestLines(h), ["applyStatus MyAppInstance/web"]);
    const status = h.cluster.instance("web")?.status;
    assert.equal(status?.phase, "Running");
    assert.equal(status?.image, "nginx:1.27");
    assert.equal(status?.replicas, 2);
    assert.equal(status?.readyReplicas, 2);
    assert.equal(condition(h, "Ready")?.status, "True");
    assert.equal(condition(h, "Progressing")?.status, "False");
    assert.equal(condition(h, "Progressing")?.reason, "RolloutComplete");
    assert.equal(condition(h, "Degraded")?.status, "False");
    assert.equal(condition(h, "Reconciling"), undefined, "kstatus: abnormal-true conditions are absent when false");
    assert.deepEqual(h.cluster.events, []);
  });
});

describe("reconcile: converged", () => {
  it("makes zero writes on resync and after an operator restart", async () => {
    // GIVEN a running instance (the fake added server defaults to every child)
    const h = await runningInstance();

    // WHEN it is reconciled again, twice (a resync, then a fresh process: the reconcile keeps no memory)
    const first = await h.run();
    const second = await h.run();

    // THEN nothing is written at all: no apply, no status, no event
    assert.deepEqual(h.cluster.allWrites(), []);
    assert.equal(first.writes, 0);
    assert.equal(second.writes, 0);
    assert.ok(h.cluster.reads > 0, "it did look");
  });

  it("makes zero writes for a converged instance with storage written in another notation", async () => {
    // GIVEN storage "1024Mi", which the apiserver stores as "1Gi"
    const h = await runningInstance({ ...spec, storage: "1024Mi" });
    h.cluster.provisionClaims("web", "standard");

    await h.run();

    assert.deepEqual(h.cluster.allWrites(), []);
  });

  it("does not fight labels or fields other managers added", async () => {
    const h = await runningInstance();
    h.cluster.edit("v1", "Service", "web", (o) => {
      o.metadata.labels = { ...o.metadata.labels, "team.example.com/owner": "payments" };
    });

    await h.run();

    assert.deepEqual(h.cluster.allWrites(), []);
  });
});

describe("reconcile: drift", () => {
  it("re-creates a deleted Service with exactly one apply", async () => {
    const h = await runningInstance();
    h.cluster.remove("v1", "Service", "web");

    await h.run();

    assert.deepEqual(h.cluster.writeLines(), ["apply Service/web"]);
    assert.ok(h.cluster.get("v1", "Service", "web"));
  });

  it("restores a hand-edited image in the Deployment", async () => {
    const h = await runningInstance();
    h.cluster.edit("apps/v1", "Deployment", "web", (o) => {
      const template = (o["spec"] as { template: { spec: { containers: { image: string }[] } } }).template;
      template.spec.containers[0]!.image = "nginx:hacked";
    });

    await h.run();

    assert.deepEqual(h.cluster.writeLines().slice(0, 1), ["apply Deployment/web"]);
    const deployment = h.cluster.get("apps/v1", "Deployment", "web");
    const containers = (deployment?.["spec"] as { template: { spec: { containers: { image: string }[] } } }).template
      .spec.containers;
    assert.equal(containers[0]?.image, "nginx:1.27");
  });

  it("restores a scaled Deployment", async () => {
    const h = await runningInstance();
    h.cluster.edit("apps/v1", "Deployment", "web", (o) => void ((o["spec"] as { replicas: number }).replicas = 5));

    await h.run();

    assert.equal(h.cluster.writeLines()[0], "apply Deployment/web");
    assert.equal((h.cluster.get("apps/v1", "Deployment", "web")?.["spec"] as { replicas: number }).replicas, 2);
  });
});

describe("reconcile: image change", () => {
  it("rolls out, stays Progressing until done, then moves status.image", async () => {
    // GIVEN a running instance on nginx:1.27
    const h = await runningInstance();
    const readySince = condition(h, "Ready")?.lastTransitionTime;

    // WHEN the image changes
    await h.advance(60_000);
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void ((o["spec"] as { image: string }).image = "nginx:1.28"),
    );
    await h.run();

    // THEN the Deployment gets the new image and the instance is Progressing, still reporting the old image
    assert.deepEqual(h.cluster.writeLines(), ["apply Deployment/web", "applyStatus MyAppInstance/web"]);
    let status = h.cluster.instance("web")?.status;
    assert.equal(status?.image, "nginx:1.27");
    assert.equal(status?.phase, "Progressing");
    assert.equal(status?.observedGeneration, 2);
    assert.equal(condition(h, "Progressing")?.status, "True");
    assert.equal(condition(h, "Progressing")?.reason, "RollingOut");
    assert.equal(condition(h, "Progressing")?.observedGeneration, 2);
    assert.equal(condition(h, "Reconciling")?.status, "True");
    assert.equal(condition(h, "Ready")?.status, "False");
    assert.equal(condition(h, "Ready")?.lastTransitionTime, "2030-01-01T00:01:00Z", "Ready flipped now");
    assert.notEqual(readySince, undefined);

    // WHEN half the replicas run the new image (the controller has seen the new generation)
    h.cluster.reset();
    await h.advance(10_000);
    h.cluster.progress("Deployment", "web", { updated: 1, ready: 2, replicas: 3 });
    await h.run();

    // THEN still Progressing; the condition's transition time stays where the flip happened
    status = h.cluster.instance("web")?.status;
    assert.equal(status?.image, "nginx:1.27");
    assert.equal(condition(h, "Progressing")?.lastTransitionTime, "2030-01-01T00:01:00Z");
    assert.match(condition(h, "Progressing")?.message ?? "", /1\/2 replicas updated/);
    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"], "only the message changed");

    // WHEN the rollout completes
    h.cluster.reset();
    await h.advance(10_000);
    h.cluster.rollOut("Deployment", "web");
    await h.run();

    // THEN status.image moves, Progressing flips to False, and the rollout is announced
    status = h.cluster.instance("web")?.status;
    assert.equal(status?.image, "nginx:1.28");
    assert.equal(status?.phase, "Running");
    assert.equal(condition(h, "Progressing")?.status, "False");
    assert.equal(condition(h, "Progressing")?.lastTransitionTime, "2030-01-01T00:01:20Z");
    assert.equal(condition(h, "Reconciling"), undefined);
    assert.deepEqual(
      h.cluster.events.map((e) => `${e.reason}: ${e.note}`),
      ["RolloutComplete: nginx:1.28 is rolled out: 2/2 replicas ready"],
    );
  });
});

describe("reconcile: lifecycle events", () => {
  it("tells each step once: Created, Scaled, Ready, RollingOut, RolloutComplete, Deleted, Finalized", async () => {
    // GIVEN a new instance, WHEN it is created and rolled out THEN Created, and no Ready (its condition tells it)
    const h = harness();
    h.cluster.createInstance("web", spec);
    await h.run();
    assert.deepEqual(eventLines(h), ["Created: Created Service web and Deployment web"]);
    h.cluster.reset();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    assert.deepEqual(eventLines(h), []);

    // WHEN it is reconciled again (converged) THEN no event: an event is a write
    h.cluster.reset();
    await h.run();
    assert.deepEqual(h.cluster.allWrites(), []);

    // WHEN it is scaled THEN Scaled names the counts; once the replicas are ready, Ready again
    h.cluster.reset();
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void ((o["spec"] as { replicas: number }).replicas = 3),
    );
    await h.run();
    assert.deepEqual(eventLines(h), ["Scaled: Scaled Deployment web from 2 to 3 replicas"]);
    h.cluster.reset();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    assert.deepEqual(eventLines(h), ["Ready: 3/3 replicas ready, running nginx:1.27"]);

    // WHEN the image changes THEN the Deployment is applied with no Updated event (its rollout's events tell it);
    // each step of its rollout is told, as ScalingReplicaSet
    h.cluster.reset();
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void ((o["spec"] as { image: string }).image = "nginx:1.28"),
    );
    await h.run();
    assert.deepEqual(requestLines(h), ["apply Deployment/web", "applyStatus MyAppInstance/web"]);
    assert.deepEqual(eventLines(h), []);
    h.cluster.reset();
    h.cluster.progress("Deployment", "web", { updated: 1, ready: 3, replicas: 4 });
    await h.run();
    assert.deepEqual(eventLines(h), ["RollingOut: Rolling out nginx:1.28: 1/3 replicas updated"]);
    // only the ready count moved: the status says so, no event
    h.cluster.reset();
    h.cluster.progress("Deployment", "web", { updated: 1, ready: 2, replicas: 4 });
    await h.run();
    assert.deepEqual(requestLines(h), ["applyStatus MyAppInstance/web"]);
    h.cluster.reset();
    h.cluster.progress("Deployment", "web", { updated: 2, ready: 3, replicas: 4 });
    await h.run();
    assert.deepEqual(eventLines(h), ["RollingOut: Rolling out nginx:1.28: 2/3 replicas updated"]);
    // and its end is RolloutComplete (not also Ready)
    h.cluster.reset();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    assert.deepEqual(eventLines(h), ["RolloutComplete: nginx:1.28 is rolled out: 3/3 replicas ready"]);

    // WHEN it is deleted THEN nothing of ours: without storage it has no finalizer, and the garbage collector takes
    // its Deployment and Service
    h.cluster.reset();
    h.cluster.deleteInstance("web");
    await h.run();
    assert.deepEqual(requestLines(h), []);
    assert.equal(h.cluster.instance("web"), undefined, "the apiserver let it go at once");
  });

  it("tells a deletion with storage: each child's Deleted, what became of the claims, then Finalized", async () => {
    const h = await runningInstance({ ...spec, storage: "1Gi" });
    h.cluster.provisionClaims("web", "standard");
    h.cluster.reset();

    h.cluster.deleteInstance("web");
    await h.run();

    assert.deepEqual(requestLines(h), [
      "delete StatefulSet/web",
      "event Deleted",
      "delete Service/web",
      "event Deleted",
      "delete Service/web-pods",
      "event Deleted",
      "event RetainedVolumeClaims",
      "setFinalizers MyAppInstance/web",
      "event Finalized",
    ]);
    assert.equal(
      h.cluster.events.at(-1)?.note,
      "Cleaned up; removed the finalizer myappinstance.finalizer.example.com",
    );
  });

  it("tells a StatefulSet's three children in one Created event, Services first", async () => {
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });

    await h.run();

    assert.deepEqual(eventLines(h), ["Created: Created Service web, Service web-pods and StatefulSet web"]);
    assert.equal(h.cluster.events[0]?.related?.kind, "StatefulSet");
  });

  it("sends a new StatefulSet without waiting for its governing Service: a create costs one round trip less", async () => {
    // GIVEN a new instance with storage, and an apiserver that answers the governing Service's apply only later
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    const apply = h.cluster.apply.bind(h.cluster);
    let governingPending = false;
    let sentWhileGoverningPending: boolean | undefined;
    h.cluster.apply = async (configuration) => {
      if (configuration.kind === "StatefulSet") sentWhileGoverningPending = governingPending;
      if (configuration.kind === "Service" && configuration.metadata.name === "web-pods") {
        governingPending = true;
        // Answered once every request the reconcile can send meanwhile (all in microtasks here) has gone out.
        await new Promise((resolve) => setImmediate(resolve));
        governingPending = false;
      }
      return apply(configuration);
    };

    // WHEN it is reconciled for the first time
    await h.run();

    // THEN the StatefulSet's apply went out while the governing Service's was still unanswered
    assert.equal(sentWhileGoverningPending, true);
  });

  it("applies a missing governing Service before touching a StatefulSet that exists", async () => {
    // GIVEN a running instance with storage whose governing Service someone deleted
    const h = await runningInstance({ ...spec, storage: "1Gi" });
    h.cluster.remove("v1", "Service", "web-pods");

    // WHEN it is reconciled
    await h.run();

    // THEN the Service comes back first (a StatefulSet re-created to adopt it must find it there)
    assert.equal(requestLines(h)[0], "apply Service/web-pods");
  });

  it("tells a child re-created after someone deleted it", async () => {
    const h = await runningInstance();
    h.cluster.remove("v1", "Service", "web");

    await h.run();

    assert.deepEqual(requestLines(h), ["apply Service/web", "event Created"]);
    assert.deepEqual(eventLines(h), ["Created: Created Service web"]);
  });
});

describe("reconcile: an instance deleted while it is reconciled", () => {
  it("is done, without an error, when a write finds the instance gone", async () => {
    // GIVEN a new instance with storage that is deleted (without our finalizer yet) between the read and the first
    // write
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    const setFinalizers = h.cluster.setFinalizers.bind(h.cluster);
    h.cluster.setFinalizers = async (instance, finalizers) => {
      h.cluster.remove("example.com/v1", "MyAppInstance", "web");
      return setFinalizers(instance, finalizers);
    };

    // WHEN it is reconciled THEN the 404 is taken for the deletion it is: no error to retry and warn about
    const outcome = await h.run();

    assert.deepEqual(outcome, { writes: 1 });
    assert.deepEqual(h.cluster.writeLines(), ["setFinalizers MyAppInstance/web"]);
  });

  it("still fails on a 404 while the instance exists (a child's namespace, say, is not the instance's deletion)", async () => {
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    h.cluster.failNext("setFinalizers", new NotFoundError(404, 'myappinstances "web" not found'));

    await assert.rejects(h.run(), TransientError);
  });
});

describe("reconcile: deletion", () => {
  it("deletes the children, keeps the volume claims by default, then removes the finalizer", async () => {
    // GIVEN a running instance with storage and two bound claims
    const h = await runningInstance({ ...spec, storage: "1Gi" });
    h.cluster.provisionClaims("web", "standard");

    // WHEN it is deleted
    h.cluster.deleteInstance("web");
    await h.run();

    // THEN its children go, its claims stay, and the finalizer is removed last
    assert.deepEqual(h.cluster.writeLines(), [
      "delete StatefulSet/web",
      "delete Service/web",
      "delete Service/web-pods",
      "setFinalizers MyAppInstance/web",
    ]);
    assert.equal(h.cluster.instance("web"), undefined, "the apiserver let it go");
    assert.ok(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-0"));
    assert.ok(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-1"));
    const retained = h.cluster.events.find((e) => e.reason === "RetainedVolumeClaims");
    assert.match(retained?.note ?? "", /data-web-0, data-web-1/);
  });

  it("deletes the volume claims when storageReclaimPolicy is Delete", async () => {
    const h = await runningInstance({ ...spec, storage: "1Gi", storageReclaimPolicy: "Delete" });
    h.cluster.provisionClaims("web", "standard");

    h.cluster.deleteInstance("web");
    await h.run();

    assert.deepEqual(h.cluster.writeLines(), [
      "delete StatefulSet/web",
      "delete Service/web",
      "delete Service/web-pods",
      "delete PersistentVolumeClaim/data-web-0",
      "delete PersistentVolumeClaim/data-web-1",
      "setFinalizers MyAppInstance/web",
    ]);
    assert.equal(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-0"), undefined);
  });

  it("under Delete keeps the claims an earlier instance of the same name kept, and deletes only its own", async () => {
    // GIVEN claims data-web-0/1 that an earlier instance web kept (Retain), and a new web on Delete with 3
    // replicas: it mounts those two again and makes data-web-2
    const h = harness();
    h.cluster.put({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: "standard", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
      provisioner: "example.com/local",
    });
    for (const name of ["data-web-0", "data-web-1"]) {
      h.cluster.put({
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: {
          name,
          namespace: "default",
          labels: { "app.kubernetes.io/name": "myapp", "app.kubernetes.io/instance": "web" },
          creationTimestamp: "2025-06-01T10:00:00Z",
        },
        spec: { storageClassName: "standard", resources: { requests: { storage: "1Gi" } } },
        status: { phase: "Bound", capacity: { storage: "1Gi" } },
      } as KubeObject);
    }
    h.cluster.createInstance("web", { ...spec, replicas: 3, storage: "1Gi", storageReclaimPolicy: "Delete" });
    await h.run();
    h.cluster.provisionClaims("web", "standard");
    h.cluster.rollOut("StatefulSet", "web");
    await h.run();
    assert.ok(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-2"), "precondition: it made data-web-2");

    // WHEN it is deleted
    h.cluster.deleteInstance("web");
    await h.run();

    // THEN the claim it made goes, and the earlier instance's two stay, with their data, said in a warning
    assert.ok(h.cluster.writeLines().includes("delete PersistentVolumeClaim/data-web-2"));
    assert.ok(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-0"));
    assert.ok(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-1"));
    assert.equal(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-2"), undefined);
    const deleted = h.cluster.events.find((e) => e.reason === "DeletedVolumeClaims");
    assert.match(deleted?.note ?? "", /^Deleted volume claims data-web-2 \(storageReclaimPolicy: Delete\)$/);
    const retained = h.cluster.events.find((e) => e.reason === "RetainedVolumeClaims");
    assert.equal(retained?.type, "Warning");
    assert.match(
      retained?.note ?? "",
      /^Kept volume claims data-web-0, data-web-1 although storageReclaimPolicy is Delete: they are older than this instance \(an earlier instance named web kept them/,
    );
  });

  it("never deletes a namesake it does not control", async () => {
    const h = await runningInstance({ ...spec, storage: "1Gi" });
    h.cluster.remove("v1", "Service", "web");
    h.cluster.put({ apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "default" }, spec: {} });

    h.cluster.deleteInstance("web");
    await h.run();

    assert.deepEqual(h.cluster.writeLines(), [
      "delete StatefulSet/web",
      "delete Service/web-pods",
      "setFinalizers MyAppInstance/web",
    ]);
    assert.ok(h.cluster.get("v1", "Service", "web"));
  });

  it("finalizes a storage-less instance that carries our finalizer from an earlier version", async () => {
    const h = await runningInstance();
    h.cluster.edit("example.com/v1", "MyAppInstance", "web", (o) => {
      (o["metadata"] as { finalizers?: string[] }).finalizers = [finalizer];
    });
    h.cluster.reset();

    h.cluster.deleteInstance("web");
    await h.run();

    assert.deepEqual(h.cluster.writeLines(), [
      "delete Deployment/web",
      "delete Service/web",
      "setFinalizers MyAppInstance/web",
    ]);
    assert.equal(h.cluster.instance("web"), undefined);
  });

  it("does nothing for a deleted instance without our finalizer, or one that is gone", async () => {
    const h = harness();
    h.cluster.createInstance("web", spec);
    h.cluster.edit("example.com/v1", "MyAppInstance", "web", (o) => {
      (o["metadata"] as { finalizers?: string[] }).finalizers = ["example.com/someone-elses"];
    });
    h.cluster.deleteInstance("web");

    assert.deepEqual(await h.run(), { writes: 0 });
    assert.deepEqual(await h.run("missing"), { writes: 0 });
    assert.deepEqual(h.cluster.allWrites(), []);
  });
});

describe("reconcile: a finalizer list the cache withheld", () => {
  it("reads the instance live to add and remove its own finalizer, keeping the tenant's", async () => {
    // GIVEN an instance with storage that a tenant gave 4,400 finalizers of its own (1.2 MB), as the cache keeps it
    const theirs = Array.from({ length: 4400 }, (_, i) => `${"a".repeat(240)}.example.com/f${i}`);
    const h = harness();
    h.cluster.cacheKeeps = (object) => (object.kind === "MyAppInstance" ? instanceAsRead(128)(object) : object);
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    h.cluster.edit("example.com/v1", "MyAppInstance", "web", (o) => void (o.metadata.finalizers = [...theirs]));
    h.cluster.reset();

    // WHEN it is reconciled THEN its finalizer is added to the list as stored, read live at the version written to
    await h.run();
    // (a list of its name: the operator's role may list instances, not get them)
    const instanceReads = () => h.cluster.readLines.filter((line) => line === "list MyAppInstance");
    assert.deepEqual(instanceReads(), ["list MyAppInstance"]);
    assert.deepEqual(h.cluster.instance("web")?.metadata.finalizers, [...theirs, finalizer]);

    // WHEN it is deleted THEN its finalizer is removed from the list as stored, and only its own
    h.cluster.provisionClaims("web", "standard");
    h.cluster.deleteInstance("web");
    h.cluster.reset();
    await h.run();
    assert.deepEqual(instanceReads(), ["list MyAppInstance"]);
    assert.deepEqual(h.cluster.instance("web")?.metadata.finalizers, theirs);
  });
});

describe("reconcile: values the cache withheld", () => {
  it("reports ValuesTooLarge with their size and the limit, and renders or changes nothing", async () => {
    // GIVEN an instance stored with 8 KiB of values while the webhooks were off, as the cache keeps it under a
    // 1 KiB --render-values (operator/instance-as-read.ts)
    const h = harness();
    h.cluster.put(
      instanceAsRead(1)({
        apiVersion: "example.com/v1",
        kind: "MyAppInstance",
        metadata: { name: "web", namespace: "default" },
        spec: { image: "nginx:1.27", chart: { configMap: "app" }, values: { blob: "x".repeat(8192 - 11) } },
      }),
    );

    // WHEN reconciled
    const outcome = await h.run();

    // THEN only its finalizer (a chart instance's children are pruned on delete) and its status are written
    assert.equal(outcome.requeueAfterMs, undefined);
    assert.deepEqual(h.cluster.writeLines(), ["setFinalizers MyAppInstance/web", "applyStatus MyAppInstance/web"]);
    const degraded = condition(h, "Degraded");
    assert.equal(degraded?.reason, "ValuesTooLarge");
    assert.equal(
      degraded?.message,
      "spec.values is 8 KiB as JSON; the platform allows at most 1 KiB (--render-values); nothing is rendered " +
        "or changed until they are smaller",
    );
    assert.equal(condition(h, "Ready")?.status, "False");
  });
});

describe("reconcile: invalid spec", () => {
  it("refuses hostile value paths and values keys as InvalidSpec naming each, and no prototype changes", async () => {
    // GIVEN an instance stored before the CRD refused such paths (values keys no CRD rule can see), read as the
    // apiserver's JSON is: with own __proto__ keys
    const h = harness();
    h.cluster.createInstance(
      "web",
      JSON.parse(
        '{"image":"nginx:1.27","chart":{"configMap":"c","valuePaths":{"imageTag":"__proto__.deletionTimestamp"}},' +
          '"values":{"a":{"__proto__":{"requeueAfterMs":1}}}}',
      ),
    );

    // WHEN reconciled
    const outcome = await h.run();

    // THEN it is refused like any invalid spec, naming both fields, and no object of the process changed
    assert.equal(outcome.requeueAfterMs, undefined);
    const degraded = condition(h, "Degraded");
    assert.equal(degraded?.reason, "InvalidSpec");
    assert.match(degraded?.message ?? "", /spec\.chart\.valuePaths\.imageTag: must be a dotted value path/);
    assert.match(degraded?.message ?? "", /spec\.values\.a\.__proto__: is a reserved name/);
    const anyObject = {} as Record<string, unknown>;
    assert.equal(anyObject["deletionTimestamp"], undefined);
    assert.equal(anyObject["requeueAfterMs"], undefined);
  });

  it("reports Degraded and Stalled with reason InvalidSpec, without throwing or hot-looping", async () => {
    // GIVEN an instance whose spec the operator cannot use (the CRD would normally catch this)
    const h = harness();
    h.cluster.createInstance("web", { image: "NOT A VALID IMAGE", port: 70000 });

    // WHEN reconciled
    const outcome = await h.run();

    // THEN no child is created; the status names the fields; the outcome asks for no retry
    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"]);
    assert.equal(outcome.requeueAfterMs, undefined);
    const degraded = condition(h, "Degraded");
    assert.equal(degraded?.status, "True");
    assert.equal(degraded?.reason, "InvalidSpec");
    assert.match(degraded?.message ?? "", /spec\.image/);
    assert.match(degraded?.message ?? "", /spec\.port/);
    assert.equal(condition(h, "Stalled")?.status, "True");
    assert.equal(condition(h, "Ready")?.status, "False");
    assert.equal(h.cluster.instance("web")?.status?.phase, "Degraded");
    assert.deepEqual(
      h.cluster.events.map((e) => `${e.type} ${e.reason}`),
      ["Warning InvalidSpec"],
    );

    // WHEN reconciled again (resync)
    h.cluster.reset();
    await h.advance(600_000);
    await h.run();

    // THEN nothing is written: no status churn, no repeated event
    assert.deepEqual(h.cluster.allWrites(), []);
  });

  it("names the first issues and counts the rest, so the status is written once and not again", async () => {
    // GIVEN an instance stored before the CRD refused reserved values keys, with 600 of them: one issue each
    const h = harness();
    const keys = Array.from({ length: 600 }, (_, i) => `"key${i}":{"__proto__":{}}`).join(",");
    h.cluster.createInstance("web", JSON.parse(`{"image":"nginx:1.27","chart":{"configMap":"c"},"values":{${keys}}}`));

    // WHEN reconciled
    await h.run();

    // THEN the status says InvalidSpec with the first issues and how many more, and the schema accepts it
    assert.deepEqual(h.cluster.writeLines(), ["setFinalizers MyAppInstance/web", "applyStatus MyAppInstance/web"]);
    const degraded = condition(h, "Degraded");
    assert.equal(degraded?.reason, "InvalidSpec");
    assert.match(degraded?.message ?? "", /^the spec is invalid: spec\.values\.key0\.__proto__: is a reserved name/);
    assert.match(degraded?.message ?? "", /spec\.values: has 590 more keys named __proto__, constructor or prototype/);
    assert.ok(Array.from(degraded?.message ?? "").length <= 4096);
    assert.equal(validateStatus(h.cluster.instance("web")?.status).ok, true);

    // WHEN reconciled again (resync)
    h.cluster.reset();
    await h.advance(600_000);
    await h.run();

    // THEN nothing is written
    assert.deepEqual(h.cluster.allWrites(), []);
  });

  it("recovers once the spec is fixed", async () => {
    const h = harness();
    h.cluster.createInstance("web", { image: "NOT VALID" });
    await h.run();
    h.cluster.edit("example.com/v1", "MyAppInstance", "web", (o) => void (o["spec"] = spec));
    h.cluster.reset();

    await h.run();

    assert.deepEqual(h.cluster.writeLines(), [
      "apply Service/web",
      "apply Deployment/web",
      "applyStatus MyAppInstance/web",
    ]);
    assert.equal(condition(h, "Degraded")?.status, "False");
    assert.equal(condition(h, "Stalled"), undefined);
    assert.ok(h.cluster.events.some((e) => e.reason === "Recovered"));
  });
});

describe("reconcile: Deployment to StatefulSet when storage is added", () => {
  it("creates the StatefulSet, waits for it to be ready, and only then deletes the Deployment", async () => {
    // GIVEN a running instance without storage
    const h = await runningInstance();

    // WHEN storage is added
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void ((o["spec"] as { storage?: string }).storage = "1Gi"),
    );
    const first = await h.run();

    // THEN our finalizer first (its claims will be ours to keep or delete), then the StatefulSet (and its headless
    // governing Service) next to the Deployment, which keeps serving
    assert.deepEqual(h.cluster.writeLines(), [
      "setFinalizers MyAppInstance/web",
      "apply Service/web-pods",
      "apply StatefulSet/web",
      "applyStatus MyAppInstance/web",
    ]);
    assert.ok(h.cluster.get("apps/v1", "Deployment", "web"), "the Deployment is still there");
    assert.equal(first.requeueAfterMs, 5000, "looks again while the move waits");
    assert.equal(condition(h, "Progressing")?.reason, "Migrating");
    assert.equal(h.cluster.instance("web")?.status?.readyReplicas, 2, "no gap in ready replicas");
    assert.ok(h.cluster.events.some((e) => e.reason === "Migrating"));

    // WHEN the StatefulSet is half ready
    h.cluster.reset();
    h.cluster.progress("StatefulSet", "web", { updated: 2, ready: 1 });
    await h.run();

    // THEN the Deployment still stays; both workloads' ready pods count
    assert.ok(!h.cluster.writeLines().some((line) => line.startsWith("delete")));
    assert.equal(h.cluster.instance("web")?.status?.readyReplicas, 3);

    // WHEN the StatefulSet is ready
    h.cluster.reset();
    h.cluster.rollOut("StatefulSet", "web");
    const last = await h.run();

    // THEN the Deployment is deleted, and the instance runs on the StatefulSet
    assert.deepEqual(h.cluster.writeLines(), ["delete Deployment/web", "applyStatus MyAppInstance/web"]);
    assert.equal(h.cluster.get("apps/v1", "Deployment", "web"), undefined);
    assert.equal(h.cluster.instance("web")?.status?.phase, "Running");
    assert.equal(h.cluster.instance("web")?.status?.readyReplicas, 2);
    assert.equal(last.requeueAfterMs, undefined);
    assert.ok(h.cluster.events.some((e) => e.reason === "Migrated"));
  });
});

describe("reconcile: storage growth", () => {
  async function withClaims(allowVolumeExpansion: boolean) {
    const h = await runningInstance({ ...spec, storage: "1Gi" });
    h.cluster.put(storageClass("standard", { isDefault: true, allowVolumeExpansion }));
    h.cluster.provisionClaims("web", "standard");
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void ((o["spec"] as { storage: string }).storage = "2Gi"),
    );
    return h;
  }

  it("grows each claim, then re-creates the StatefulSet without deleting its pods", async () => {
    // GIVEN claims of 1Gi on a class that allows expansion, and spec.storage grown to 2Gi
    const h = await withClaims(true);

    // WHEN reconciled
    const outcome = await h.run();

    // THEN each claim is asked to grow, and the StatefulSet is deleted with Orphan (pods keep running)
    assert.deepEqual(h.cluster.writeLines(), [
      "apply PersistentVolumeClaim/data-web-0",
      "apply PersistentVolumeClaim/data-web-1",
      "delete StatefulSet/web",
      "applyStatus MyAppInstance/web",
    ]);
    const deletion = h.cluster.requests.find((r) => r.verb === "delete");
    assert.equal(deletion?.options?.propagationPolicy, "Orphan");
    const claim = h.cluster.get("v1", "PersistentVolumeClaim", "data-web-0");
    assert.equal(
      (claim?.["spec"] as { resources: { requests: { storage: string } } }).resources.requests.storage,
      "2Gi",
    );
    assert.equal(condition(h, "Progressing")?.reason, "RecreatingWorkload");
    assert.equal(outcome.requeueAfterMs, 5000);

    // WHEN reconciled again (the StatefulSet is gone)
    h.cluster.reset();
    await h.run();

    // THEN it is re-created with the new claim template
    assert.equal(h.cluster.writeLines()[0], "apply StatefulSet/web");
    const sts = h.cluster.get("apps/v1", "StatefulSet", "web");
    const templates = (
      sts?.["spec"] as { volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[] }
    ).volumeClaimTemplates;
    assert.equal(templates[0]?.spec.resources.requests.storage, "2Gi");
  });

  it("says why in a Degraded condition when the class does not allow expansion, and changes nothing", async () => {
    const h = await withClaims(false);

    await h.run();

    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"], "no claim, no StatefulSet write");
    const degraded = condition(h, "Degraded");
    assert.equal(degraded?.status, "True");
    assert.equal(degraded?.reason, "StorageExpansionUnsupported");
    assert.match(
      degraded?.message ?? "",
      /StorageClass "standard" of claims data-web-0, data-web-1 does not allow volume expansion/,
    );
    assert.equal(condition(h, "Stalled")?.status, "True");
    assert.equal(h.cluster.events.find((e) => e.type === "Warning")?.reason, "StorageExpansionUnsupported");

    h.cluster.reset();
    await h.run();
    assert.deepEqual(h.cluster.allWrites(), [], "no hot loop, no event spam");
  });
});

describe("reconcile: volume growth judged by capacity, resumed after a failure part-way", () => {
  async function grownTo2Gi() {
    const h = await runningInstance({ ...spec, storage: "1Gi" });
    h.cluster.put(storageClass("standard", { isDefault: true, allowVolumeExpansion: true }));
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void ((o["spec"] as { storage: string }).storage = "2Gi"),
    );
    return h;
  }
  const request = (h: ReturnType<typeof harness>, name: string) =>
    (h.cluster.get("v1", "PersistentVolumeClaim", name)?.["spec"] as { resources: { requests: { storage: string } } })
      .resources.requests.storage;

  it("a claim that fails to grow is a transient error: the others grow, nothing is re-created, the retry resumes", async () => {
    // GIVEN growth to 2Gi, and the apiserver failing the first claim's patch
    const h = await grownTo2Gi();
    h.cluster.failNext("apply", new ServerError(500, "etcdserver: request timed out"), "PersistentVolumeClaim");

    // WHEN reconciled
    // THEN the reconcile fails transiently, the second claim grew, and the StatefulSet was left alone
    await assert.rejects(h.run(), (error: unknown) => {
      assert.ok(error instanceof TransientError, String(error));
      assert.match(error.message, /grew 1 of 2 volume claims to 2Gi; retrying the rest: data-web-0/);
      return true;
    });
    assert.equal(request(h, "data-web-0"), "1Gi");
    assert.equal(request(h, "data-web-1"), "2Gi");
    assert.ok(!h.cluster.writeLines().some((line) => line.startsWith("delete")), "no re-creation half-way");
    assert.notEqual(condition(h, "Degraded")?.status, "True", "not Degraded for a transient failure");

    // WHEN retried
    h.cluster.reset();
    await h.run();

    // THEN only the claim left behind is grown, and the StatefulSet is re-created
    assert.deepEqual(h.cluster.writeLines().slice(0, 2), [
      "apply PersistentVolumeClaim/data-web-0",
      "delete StatefulSet/web",
    ]);
    assert.equal(request(h, "data-web-0"), "2Gi");
  });

  it("is not Ready until every claim's status.capacity has the new size", async () => {
    // GIVEN growth requested and the StatefulSet re-created, but the resizer has not reported yet
    const h = await grownTo2Gi();
    await h.run();
    await h.run();
    h.cluster.edit("v1", "PersistentVolumeClaim", "data-web-0", (o) => {
      o["status"] = {
        phase: "Bound",
        capacity: { storage: "1Gi" },
        conditions: [{ type: "FileSystemResizePending", status: "True", message: "waiting for the node" }],
      };
    });
    h.cluster.rollOut("StatefulSet", "web");
    h.cluster.reset();

    // WHEN reconciled
    const outcome = await h.run();

    // THEN the instance is Progressing with ExpandingVolumes, naming the claims and the resize condition
    assert.equal(condition(h, "Ready")?.status, "False");
    assert.equal(condition(h, "Progressing")?.reason, "ExpandingVolumes");
    assert.match(
      condition(h, "Progressing")?.message ?? "",
      /data-web-0 has 1Gi \(FileSystemResizePending: waiting for the node\)/,
    );
    assert.equal(outcome.requeueAfterMs, 5000, "looks again: the operator does not watch claims");

    // WHEN the resizer reports the new capacity on both claims
    for (const name of ["data-web-0", "data-web-1"]) {
      h.cluster.edit("v1", "PersistentVolumeClaim", name, (o) => {
        o["status"] = { phase: "Bound", capacity: { storage: "2Gi" } };
      });
    }
    await h.run();

    // THEN it is Ready
    assert.equal(condition(h, "Ready")?.status, "True");
  });

  it("reports a resize the driver declared infeasible as Degraded", async () => {
    const h = await grownTo2Gi();
    await h.run();
    await h.run();
    h.cluster.rollOut("StatefulSet", "web");
    h.cluster.edit("v1", "PersistentVolumeClaim", "data-web-1", (o) => {
      o["status"] = {
        phase: "Bound",
        capacity: { storage: "1Gi" },
        allocatedResourceStatuses: { storage: "ControllerResizeInfeasible" },
      };
    });
    await h.run();
    assert.equal(condition(h, "Degraded")?.reason, "VolumeExpansionInfeasible");
    assert.match(condition(h, "Degraded")?.message ?? "", /data-web-1: ControllerResizeInfeasible/);
  });
});

describe("reconcile: pods that cannot be created", () => {
  it("a StatefulSet's FailedCreate event is Degraded with the apiserver's message, until a success follows", async () => {
    // GIVEN an instance with storage whose StatefulSet controller cannot create pods
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    await h.run();
    h.cluster.progress("StatefulSet", "web", { updated: 0, ready: 0, replicas: 0 });
    const uid = h.cluster.get("apps/v1", "StatefulSet", "web")?.metadata.uid;
    const event = (name: string, reason: string, at: string, message: string) => ({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace: "default" },
      involvedObject: { kind: "StatefulSet", name: "web", uid },
      reason,
      message,
      lastTimestamp: at,
    });
    const forbidden =
      'create Pod web-0 in StatefulSet web failed error: pods "web-0" is forbidden: violates PodSecurity "restricted:latest"';
    h.cluster.put(event("web.1", "FailedCreate", "2030-01-01T00:00:02Z", forbidden));
    h.cluster.put(
      event("web.0", "SuccessfulCreate", "2030-01-01T00:00:01Z", "create Pod web-1 in StatefulSet web successful"),
    );

    // WHEN reconciled
    const outcome = await h.run();

    // THEN Degraded says why, in the apiserver's words, and it keeps looking
    assert.equal(condition(h, "Degraded")?.reason, "FailedCreate");
    assert.match(condition(h, "Degraded")?.message ?? "", /violates PodSecurity "restricted:latest"/);
    assert.equal(outcome.requeueAfterMs, 5000);

    // WHEN a later create succeeds
    h.cluster.put(
      event("web.2", "SuccessfulCreate", "2030-01-01T00:00:09Z", "create Pod web-0 in StatefulSet web successful"),
    );
    await h.run();

    // THEN it is no longer Degraded
    assert.equal(condition(h, "Degraded")?.status, "False");
  });

  it("Events too large to read (someone's, megabytes each) are EventsTooLarge, looked at again slowly", async () => {
    // GIVEN an instance with storage whose StatefulSet misses its pods, and Events about it past their read budget
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    await h.run();
    h.cluster.progress("StatefulSet", "web", { updated: 0, ready: 0, replicas: 0 });
    const uid = h.cluster.get("apps/v1", "StatefulSet", "web")?.metadata.uid ?? "";
    h.cluster.failNext("list", new LiveListTooLarge("Event", "default", 2, "read"), "Event");

    // WHEN reconciled
    const outcome = await h.run();

    // THEN Degraded says so, names the command that lists them, and the next read is minutes away, not seconds
    assert.equal(condition(h, "Degraded")?.reason, "EventsTooLarge");
    assert.match(condition(h, "Degraded")?.message ?? "", /take more than 1 MiB to read/);
    assert.ok(condition(h, "Degraded")?.message?.includes(`--field-selector involvedObject.uid=${uid}`));
    assert.equal(outcome.requeueAfterMs, unreadableEventsPollMs);
  });

  it("an unseen Deployment generation nobody asked for keeps a Ready instance Ready through its grace", async () => {
    // GIVEN a Ready instance, and the reconciler's memory of generation lags
    const h = harness({ generationLags: new Sightings(60_000) });
    h.cluster.createInstance("web", spec);
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    assert.equal(condition(h, "Ready")?.status, "True", "precondition: Ready");
    const lag = () =>
      h.cluster.edit("apps/v1", "Deployment", "web", (o) => {
        // An annotation is a new generation for a Deployment; its controller has not seen it yet
        o.metadata.generation = (o.metadata.generation ?? 1) + 1;
        o.metadata.annotations = { ...o.metadata.annotations, touched: String(o.metadata.generation) };
      });
    const observe = () =>
      h.cluster.edit("apps/v1", "Deployment", "web", (o) => {
        (o["status"] as { observedGeneration?: number }).observedGeneration = o.metadata.generation;
      });
    h.cluster.reset();

    // WHEN someone annotates its Deployment, and the controller takes a moment to see it
    lag();
    const during = await h.run();
    // THEN nothing is written, and it looks again when the grace ends
    assert.deepEqual(h.cluster.writeLines(), []);
    assert.equal(during.requeueAfterMs, 2000);
    observe();
    await h.advance(2000);
    assert.equal((await h.run()).writes, 0);

    // WHEN a lag outlasts the grace
    lag();
    await h.run();
    await h.advance(1000);
    assert.equal((await h.run()).requeueAfterMs, 1000, "the grace runs from the first sighting");
    await h.advance(1000);
    await h.run();
    // THEN it is reported: Progressing until the controller sees it
    assert.equal(condition(h, "Ready")?.status, "False");
    assert.equal(condition(h, "Progressing")?.reason, "RollingOut");
    observe();
    await h.run();
    assert.equal(condition(h, "Ready")?.status, "True");

    // AND without the memory (a single reconcile) a lag is reported at once, as before
    const plain = harness();
    plain.cluster.createInstance("web", spec);
    await plain.run();
    plain.cluster.rollOut("Deployment", "web");
    await plain.run();
    plain.cluster.edit("apps/v1", "Deployment", "web", (o) => {
      o.metadata.generation = (o.metadata.generation ?? 1) + 1;
    });
    await plain.run();
    assert.equal(condition(plain, "Ready")?.status, "False");
  });

  it("with sightings, a pod missing for less than a poll reads no events; one missing a poll later does", async () => {
    // GIVEN a reconciler's memory of missing pods, and a StatefulSet that cannot create its pod
    const h = harness({ missingPodSightings: new Sightings(20_000) });
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    await h.run();
    h.cluster.progress("StatefulSet", "web", { updated: 0, ready: 0, replicas: 0 });
    const uid = h.cluster.get("apps/v1", "StatefulSet", "web")?.metadata.uid;
    h.cluster.put({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "web.1", namespace: "default" },
      involvedObject: { kind: "StatefulSet", name: "web", uid },
      reason: "FailedCreate",
      message: 'pods "web-0" is forbidden: exceeded quota',
      lastTimestamp: "2030-01-01T00:00:02Z",
    });
    const eventReads = () => h.cluster.readLines.filter((line) => line.startsWith("list Event")).length;

    // WHEN the missing pod is first seen (a rollout's moment looks the same)
    const first = await h.run();
    // THEN no events are read: it looks again when the poll has passed
    assert.equal(eventReads(), 0);
    assert.equal(first.requeueAfterMs, 5000);
    assert.notEqual(condition(h, "Degraded")?.status, "True");

    // WHEN it is still missing a poll later
    await h.advance(5000);
    await h.run();
    // THEN the events are read and tell why
    assert.equal(eventReads(), 1);
    assert.equal(condition(h, "Degraded")?.reason, "FailedCreate");

    // WHEN the pod comes, and later goes missing again
    h.cluster.rollOut("StatefulSet", "web");
    await h.run();
    h.cluster.progress("StatefulSet", "web", { updated: 1, ready: 1, replicas: 1 });
    await h.run();
    // THEN the new gap waits its own poll before reading
    assert.equal(eventReads(), 1);
  });

  it("a Deployment's ReplicaFailure condition is Degraded with its reason and message, while pods are missing", async () => {
    const h = await runningInstance();
    // GIVEN a stale ReplicaFailure on a Deployment that has all its pods (a scale-down made it moot): ignored
    const failure = {
      type: "ReplicaFailure",
      status: "True",
      reason: "FailedCreate",
      message: 'pods "web-x" is forbidden: exceeded quota',
    };
    h.cluster.edit("apps/v1", "Deployment", "web", (o) => {
      (o["status"] as Record<string, unknown>)["conditions"] = [failure];
    });
    await h.run();
    assert.equal(condition(h, "Ready")?.status, "True");
    // WHEN pods are missing
    h.cluster.progress("Deployment", "web", { updated: 1, ready: 1, replicas: 1 });
    h.cluster.edit("apps/v1", "Deployment", "web", (o) => {
      (o["status"] as Record<string, unknown>)["conditions"] = [
        {
          type: "ReplicaFailure",
          status: "True",
          reason: "FailedCreate",
          message: 'pods "web-x" is forbidden: exceeded quota',
        },
      ];
    });
    await h.run();
    assert.equal(condition(h, "Degraded")?.reason, "FailedCreate");
    assert.match(
      condition(h, "Degraded")?.message ?? "",
      /^pods cannot be created: pods "web-x" is forbidden: exceeded quota/,
    );
    assert.equal(h.cluster.instance("web")?.status?.phase, "Degraded");
  });
});

describe("reconcile: StorageClass missing", () => {
  const fast = { ...spec, storage: "1Gi", storageClassName: "fast" };

  it("reports StorageClassNotFound without throwing, polls slowly, and recovers once the class exists", async () => {
    // GIVEN a cluster with a default class, and an instance naming a class that does not exist
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", fast);

    // WHEN reconciled
    const outcome = await h.run();

    // THEN the children are still applied (claims bind by themselves once the class exists), and the status says why
    assert.deepEqual(h.cluster.writeLines(), [
      "setFinalizers MyAppInstance/web",
      "apply Service/web",
      "apply Service/web-pods",
      "apply StatefulSet/web",
      "applyStatus MyAppInstance/web",
    ]);
    assert.deepEqual(
      h.cluster.readLines.filter((line) => line.includes("StorageClass")),
      ["find StorageClass/fast"],
      "one read of the named class, no list",
    );
    const degraded = condition(h, "Degraded");
    assert.equal(degraded?.status, "True");
    assert.equal(degraded?.reason, "StorageClassNotFound");
    assert.match(
      degraded?.message ?? "",
      /^StorageClass "fast" does not exist, so volume claims data-web-0, data-web-1/,
    );
    assert.match(degraded?.message ?? "", /Create StorageClass "fast" and the instance continues by itself/);
    assert.match(degraded?.message ?? "", /spec\.storageClassName cannot change once spec\.storage is set/);
    assert.equal(condition(h, "Stalled")?.status, "True");
    assert.equal(condition(h, "Ready")?.status, "False");
    assert.equal(condition(h, "Progressing")?.status, "False");
    assert.equal(h.cluster.instance("web")?.status?.phase, "Degraded");
    assert.deepEqual(
      h.cluster.events.filter((e) => e.type === "Warning").map((e) => e.reason),
      ["StorageClassNotFound"],
    );
    // and the runtime is asked to look again slowly: nothing it watches changes when the class is created
    assert.equal(outcome.requeueAfterMs, 30_000);

    // WHEN the StatefulSet controller has made the claims, which wait, and the poll comes round
    h.cluster.pendingClaims("web");
    h.cluster.reset();
    await h.advance(30_000);
    const again = await h.run();

    // THEN nothing is written (no hot loop, no event spam), and it keeps polling
    assert.deepEqual(h.cluster.allWrites(), []);
    assert.equal(again.requeueAfterMs, 30_000);

    // WHEN the class is created
    h.cluster.put(storageClass("fast"));
    h.cluster.reset();
    const recovered = await h.run();

    // THEN Degraded clears and the instance is back to Progressing, waiting for its volumes; no more polling
    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"]);
    assert.equal(condition(h, "Degraded")?.status, "False");
    assert.equal(condition(h, "Stalled"), undefined);
    assert.equal(condition(h, "Progressing")?.status, "True");
    assert.ok(h.cluster.events.some((e) => e.reason === "Recovered"));
    assert.equal(recovered.requeueAfterMs, undefined);

    // WHEN the provisioner binds the claims and the pods become ready
    h.cluster.provisionClaims("web", "fast");
    h.cluster.rollOut("StatefulSet", "web");
    await h.run();

    // THEN it runs, and from now on costs no StorageClass read at all
    assert.equal(h.cluster.instance("web")?.status?.phase, "Running");
    assert.equal(condition(h, "Ready")?.status, "True");
    h.cluster.reset();
    await h.run();
    assert.deepEqual(h.cluster.allWrites(), []);
    assert.deepEqual(
      h.cluster.readLines.filter((line) => line.includes("StorageClass")),
      [],
    );
  });

  it("reports NoDefaultStorageClass when no class is named and none is the default, until one is", async () => {
    // GIVEN only a class that is not the default, and an instance with storage that names no class
    const h = harness();
    h.cluster.put(storageClass("slow"));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });

    const outcome = await h.run();
    h.cluster.pendingClaims("web");

    // THEN Degraded says there is no default class, and how to fix it
    const degraded = condition(h, "Degraded");
    assert.equal(degraded?.reason, "NoDefaultStorageClass");
    assert.match(
      degraded?.message ?? "",
      /spec\.storageClassName is not set and the cluster has no default StorageClass/,
    );
    assert.match(degraded?.message ?? "", /storageclass\.kubernetes\.io\/is-default-class: "true"/);
    assert.match(degraded?.message ?? "", /volume claims data-web-0, data-web-1 cannot be provisioned/);
    assert.match(degraded?.message ?? "", /Mark a StorageClass as the default/);
    assert.equal(condition(h, "Stalled")?.status, "True");
    assert.equal(outcome.requeueAfterMs, 30_000);
    assert.deepEqual(
      h.cluster.readLines.filter((line) => line.includes("StorageClass")),
      ["list StorageClass"],
    );

    // WHEN an administrator marks a class as the default
    h.cluster.put(storageClass("slow", { isDefault: true }));
    h.cluster.reset();
    const recovered = await h.run();

    // THEN the instance is no longer Degraded
    assert.equal(condition(h, "Degraded")?.status, "False");
    assert.equal(recovered.requeueAfterMs, undefined);
  });

  it("does not blame a running instance whose class was removed, only the claims it still needs", async () => {
    // GIVEN a running instance whose claims are Bound, after its (default) class was deleted
    const h = await runningInstance({ ...spec, storage: "1Gi" });
    h.cluster.remove("storage.k8s.io/v1", "StorageClass", "standard", "");

    // WHEN it is reconciled THEN nothing changes: its volumes exist
    await h.run();
    assert.deepEqual(h.cluster.allWrites(), []);
    assert.equal(condition(h, "Ready")?.status, "True");

    // WHEN it is scaled up, so a third claim needs provisioning
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void ((o["spec"] as { replicas: number }).replicas = 3),
    );
    const outcome = await h.run();

    // THEN the new claim is named in the Degraded condition
    assert.equal(condition(h, "Degraded")?.reason, "NoDefaultStorageClass");
    assert.match(condition(h, "Degraded")?.message ?? "", /volume claims data-web-2 cannot/);
    assert.equal(outcome.requeueAfterMs, 30_000);
  });

  it("takes the poll interval from deps, and the faster poll of a move wins", async () => {
    // GIVEN a running instance without storage, and no StorageClass at all
    const h = await runningInstance();
    h.cluster.remove("storage.k8s.io/v1", "StorageClass", "standard", "");

    // WHEN storage is added (a move to a StatefulSet whose volumes cannot be provisioned)
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void ((o["spec"] as { storage?: string }).storage = "1Gi"),
    );
    const moving = await h.run();

    // THEN it is Degraded, the Deployment keeps serving, and the move's 5 s poll is kept
    assert.equal(condition(h, "Degraded")?.reason, "NoDefaultStorageClass");
    assert.ok(h.cluster.get("apps/v1", "Deployment", "web"), "the Deployment keeps serving");
    assert.equal(h.cluster.instance("web")?.status?.readyReplicas, 2);
    assert.equal(moving.requeueAfterMs, 5000);

    // WHEN the storage class poll is configured shorter than the move's
    const quick = await reconcile(web, { ...h.deps, storageClassPollMs: 1000 });
    assert.equal(quick.requeueAfterMs, 1000);
  });
});

describe("reconcile: errors", () => {
  it("counts the writes it asked for in the runtime's tally when it throws, the refused one included", async () => {
    // GIVEN a new instance whose Deployment the apiserver refuses
    const h = harness();
    h.cluster.createInstance("web", spec);
    h.cluster.failNext(
      "apply",
      new InvalidError(422, 'Deployment.apps "web" is invalid: quota exceeded'),
      "Deployment",
    );

    // WHEN it is reconciled with the tally the runtime hands in
    const writes = { count: 0 };
    await assert.rejects(reconcile(web, h.deps, writes), PermanentError);

    // THEN the tally holds every write asked for before the throw (the failure line logs it), events included
    assert.deepEqual(h.cluster.writeLines(), [
      "apply Service/web",
      "apply Deployment/web",
      "applyStatus MyAppInstance/web",
    ]);
    assert.equal(writes.count, h.cluster.allWrites().length);
    assert.ok(writes.count > h.cluster.writeLines().length, "the events are counted too");
  });

  it("counts a write refused at once: a conflict on the finalizer is 1 write", async () => {
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    h.cluster.failNext("setFinalizers", new ConflictError(409, "the object has been modified"));
    const writes = { count: 0 };

    await assert.rejects(reconcile(web, h.deps, writes), ConflictError);
    assert.equal(writes.count, 1);
  });

  it("lets a 409 Conflict through unwrapped, so the runtime retries promptly", async () => {
    const h = harness();
    h.cluster.put(storageClass("standard", { isDefault: true }));
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    h.cluster.failNext("setFinalizers", new ConflictError(409, "the object has been modified"));

    await assert.rejects(h.run(), ConflictError);
  });

  it("wraps a server error in a TransientError with the cause", async () => {
    const h = harness();
    h.cluster.createInstance("web", spec);
    const cause = new ServerError(503, "etcd leader changed");
    h.cluster.failNext("find", cause, "Deployment");

    await assert.rejects(h.run(), (error: unknown) => {
      assert.ok(error instanceof TransientError);
      assert.equal(error.cause, cause);
      assert.match(error.message, /default\/web: etcd leader changed/);
      return true;
    });
  });

  it("reports a child the apiserver rejects as a PermanentError with a Degraded status", async () => {
    const h = harness();
    h.cluster.createInstance("web", spec);
    h.cluster.failNext(
      "apply",
      new InvalidError(422, 'Deployment.apps "web" is invalid: quota exceeded'),
      "Deployment",
    );

    await assert.rejects(
      h.run(),
      (error: unknown) => error instanceof PermanentError && error.reason === "ChildRejected",
    );
    assert.equal(condition(h, "Degraded")?.reason, "ChildRejected");
    assert.match(condition(h, "Degraded")?.message ?? "", /quota exceeded/);
  });

  it("does not touch a namesake controlled by someone else", async () => {
    const h = harness();
    h.cluster.createInstance("web", spec);
    h.cluster.put({
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "web",
        namespace: "default",
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "Deployment", name: "other", uid: "u-other", controller: true },
        ],
      },
      spec: {},
    });

    await assert.rejects(
      h.run(),
      (error: unknown) => error instanceof PermanentError && error.reason === "ChildOwnedElsewhere",
    );
    assert.ok(!h.cluster.writeLines().some((line) => line.startsWith("apply ")), "no child is applied");
    assert.match(condition(h, "Degraded")?.message ?? "", /Service default\/web .* controlled by Deployment other/);
  });

  it("rewrites a malformed status instead of crashing", async () => {
    const h = harness();
    h.cluster.createInstance("web", spec);
    h.cluster.edit(
      "example.com/v1",
      "MyAppInstance",
      "web",
      (o) => void (o["status"] = { conditions: "oops", phase: 7 }),
    );

    await h.run();

    assert.equal(h.cluster.instance("web")?.status?.phase, "Pending");
  });
});

describe("recordStalled", () => {
  it("records a transient failure as Stalled only, never Degraded, once and idempotently", async () => {
    // GIVEN a Ready instance
    const h = await runningInstance();
    const ready = condition(h, "Ready");
    // WHEN its reconcile keeps failing because the apiserver is browned out
    const brownOut = new TransientError("reconcile default/web: the server is currently unable to handle the request", {
      cause: new ServerError(503, "the server is currently unable to handle the request"),
    });
    await h.stalled(brownOut);
    await h.stalled(brownOut);
    // THEN one status write: Stalled=True, reason TransientFailure, quoting the error and the retry interval
    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"]);
    const stalled = condition(h, "Stalled");
    assert.equal(stalled?.status, "True");
    assert.equal(stalled?.reason, "TransientFailure");
    assert.match(stalled?.message ?? "", /retrying about every 5m.*unable to handle the request/);
    // and nothing else moves: not Degraded, still Ready as last seen, counts as they were
    assert.equal(condition(h, "Degraded")?.status, "False");
    assert.deepEqual(condition(h, "Ready"), ready);
    assert.equal(h.cluster.instance("web")?.status?.phase, "Running");
    assert.equal(h.cluster.instance("web")?.status?.readyReplicas, 2, "counts stay as they were");
  });

  for (const [what, cause] of [
    ["a transport error", new TransportError(0, "connect ECONNREFUSED 127.0.0.1:6443")],
    ["429", new TooManyRequestsError(429, "too many requests")],
    ["401 while credentials rotate", new UnauthorizedError(401, "Unauthorized")],
    ["403 while RBAC rolls out", new ForbiddenError(403, 'deployments.apps is forbidden: User "op" cannot patch')],
    ["a conflict", new ConflictError(409, "the object has been modified")],
  ] as const) {
    it(`treats ${what} as transient`, async () => {
      const h = await runningInstance();
      await h.stalled(new TransientError("reconcile default/web: failed", { cause }));
      assert.equal(condition(h, "Stalled")?.reason, "TransientFailure");
      assert.equal(condition(h, "Degraded")?.status, "False");
    });
  }

  it("records a failure with no transient cause as Degraded and Stalled, reason ReconcileFailing", async () => {
    const h = await runningInstance();
    await h.stalled(new TransientError("reconcile default/web: x is undefined", { cause: new TypeError("x") }));
    assert.equal(condition(h, "Stalled")?.reason, "ReconcileFailing");
    assert.equal(condition(h, "Degraded")?.status, "True");
    assert.equal(condition(h, "Degraded")?.reason, "ReconcileFailing");
  });

  it("clears Stalled on the first successful reconcile", async () => {
    const h = await runningInstance();
    await h.stalled(new TransientError("failed", { cause: new ServerError(503, "unavailable") }));
    assert.equal(condition(h, "Stalled")?.status, "True");
    await h.run();
    assert.equal(condition(h, "Stalled"), undefined);
    assert.equal(condition(h, "Ready")?.status, "True");
  });
});
