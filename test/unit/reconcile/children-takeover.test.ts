/**
 * No takeover by the built-in template, against the recording FakeCluster with the operator's cache as it is (only
 * objects with the operator's label): a child the instance does not control, with another controller or none, is
 * refused and left untouched, whether the cache shows it or not; a child the cache shows as ours costs no read, a
 * new one a live GET; a child of ours the cache lost is applied again; a retained volume is still adopted.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCondition, kind } from "../../../api/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import { labelKeys, managedBy } from "../../../operator/desired/index.ts";
import { PermanentError } from "../../../operator/reconcile/index.ts";
import { harness } from "./setup.ts";

const spec = { image: "nginx:1.27", replicas: 2, port: 8080 };

/** A reconcile harness whose finds see what the informers would: every instance, other objects with our label. */
function cachedHarness() {
  const h = harness();
  h.cluster.cacheHolds = (object) =>
    object.kind === kind || object.metadata.labels?.[labelKeys.managedBy] === managedBy;
  return h;
}

/** A platform's Service the tenant may not edit, with no controller and without the operator's label. */
const platformService: KubeObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "default", labels: { team: "platform" } },
  spec: { selector: { app: "payments" }, ports: [{ port: 443, targetPort: 8443 }] },
};

function degraded(h: ReturnType<typeof harness>, name = "web") {
  return findCondition(h.cluster.instance(name)?.status?.conditions, "Degraded");
}

const refusedAsTaken = (error: unknown) => error instanceof PermanentError && error.reason === "ChildOwnedElsewhere";

describe("children: no takeover", () => {
  it("refuses a Service with no controller that the cache cannot see, and writes nothing to it", async () => {
    // GIVEN a platform's unlabelled Service named like a new instance
    const h = cachedHarness();
    const before = h.cluster.put(platformService);
    h.cluster.createInstance("web", spec);

    // WHEN the instance is reconciled
    await assert.rejects(h.run(), refusedAsTaken);

    // THEN it is Degraded, naming the Service; nothing but the status is written, and the Service is as it was (a
    // forced apply made the instance its controller, rewrote its selector and added a port)
    assert.equal(degraded(h)?.reason, "ChildOwnedElsewhere");
    assert.match(
      degraded(h)?.message ?? "",
      /^Service default\/web already exists and is not the instance's \(it has no controller\); delete it or give/,
    );
    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"]);
    assert.deepEqual(h.cluster.get("v1", "Service", "web"), before);
  });

  it("refuses a Deployment another controller holds that the cache cannot see", async () => {
    const h = cachedHarness();
    const before = h.cluster.put({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "web",
        namespace: "default",
        ownerReferences: [
          { apiVersion: "example.com/v1", kind: "Platform", name: "core", uid: "u-core", controller: true },
        ],
      },
      spec: { replicas: 3 },
    });
    h.cluster.createInstance("web", spec);

    await assert.rejects(h.run(), refusedAsTaken);

    assert.match(
      degraded(h)?.message ?? "",
      /^Deployment default\/web already exists and is controlled by Platform core;/,
    );
    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"]);
    assert.deepEqual(h.cluster.get("apps/v1", "Deployment", "web"), before);
  });

  it("refuses an object with the operator's label and no controller (anyone who may create it may label it so)", async () => {
    const h = cachedHarness();
    const before = h.cluster.put({
      ...platformService,
      metadata: { ...platformService.metadata, labels: { [labelKeys.managedBy]: managedBy } },
    });
    h.cluster.createInstance("web", spec);

    await assert.rejects(h.run(), refusedAsTaken);

    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"]);
    assert.deepEqual(h.cluster.get("v1", "Service", "web"), before);
  });

  it("refuses the headless Service of an instance with storage too, before anything is written", async () => {
    const h = cachedHarness();
    h.cluster.put({ ...platformService, metadata: { ...platformService.metadata, name: "web-pods" } });
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });

    await assert.rejects(h.run(), refusedAsTaken);

    assert.match(degraded(h)?.message ?? "", /^Service default\/web-pods already exists/);
    assert.deepEqual(h.cluster.writeLines(), ["setFinalizers MyAppInstance/web", "applyStatus MyAppInstance/web"]);
  });

  it("heals once the namesake is gone: the next look creates the children", async () => {
    const h = cachedHarness();
    h.cluster.put(platformService);
    h.cluster.createInstance("web", spec);
    await assert.rejects(h.run(), refusedAsTaken);
    // WHEN the platform deletes its Service
    h.cluster.remove("v1", "Service", "web");
    h.cluster.reset();
    await h.run();
    // THEN the instance's own children are made, and the Service is the instance's
    assert.deepEqual(h.cluster.writeLines(), [
      "apply Service/web",
      "apply Deployment/web",
      "applyStatus MyAppInstance/web",
    ]);
    const uid = h.cluster.instance("web")?.metadata.uid;
    assert.equal(h.cluster.get("v1", "Service", "web")?.metadata.ownerReferences?.[0]?.uid, uid);
    assert.notEqual(degraded(h)?.status, "True");
  });
});

describe("children: what the live look costs", () => {
  it("a new instance costs one live GET per child; a converged one none", async () => {
    // GIVEN a new instance
    const h = cachedHarness();
    h.cluster.createInstance("web", spec);
    // WHEN it is created THEN each child is looked up live once before its first apply
    await h.run();
    assert.deepEqual(h.cluster.liveReadLines, ["find Deployment/web", "find Service/web"]);
    // WHEN it is reconciled again, rolled out and then converged THEN the cache shows its children as its own: no GET
    h.cluster.reset();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    await h.run();
    assert.deepEqual(h.cluster.liveReadLines, []);
  });

  it("with storage, the StatefulSet and both Services are looked up once each", async () => {
    const h = cachedHarness();
    h.cluster.put({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: "standard", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
      provisioner: "example.com/local",
    });
    h.cluster.createInstance("web", { ...spec, storage: "1Gi" });
    await h.run();
    assert.deepEqual(h.cluster.liveReadLines, ["find StatefulSet/web", "find Service/web", "find Service/web-pods"]);
  });

  it("a child of ours the cache lost (its label removed) is found live and applied again, not refused", async () => {
    // GIVEN a running instance whose Service someone stripped of the operator's label
    const h = cachedHarness();
    h.cluster.createInstance("web", spec);
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    h.cluster.edit("v1", "Service", "web", (object) => void (object.metadata.labels = {}));
    h.cluster.reset();
    // WHEN it is reconciled
    await h.run();
    // THEN the live copy shows it as the instance's: the apply puts the label back
    assert.deepEqual(h.cluster.liveReadLines, ["find Service/web"]);
    assert.deepEqual(h.cluster.writeLines(), ["apply Service/web"]);
    assert.equal(h.cluster.get("v1", "Service", "web")?.metadata.labels?.[labelKeys.managedBy], managedBy);
    assert.notEqual(degraded(h)?.status, "True");
  });
});

describe("children: retained volumes", () => {
  it("an instance re-created under the name of one deleted with Retain gets its volume claims back", async () => {
    // GIVEN an instance with storage, running on two bound claims, deleted with the default storageReclaimPolicy
    const h = cachedHarness();
    h.cluster.put({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: "standard", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
      provisioner: "example.com/local",
    });
    const withStorage = { ...spec, storage: "1Gi" };
    h.cluster.createInstance("web", withStorage);
    await h.run();
    h.cluster.provisionClaims("web", "standard");
    h.cluster.rollOut("StatefulSet", "web");
    await h.run();
    h.cluster.deleteInstance("web");
    await h.run();
    assert.equal(h.cluster.instance("web"), undefined, "precondition: the instance is gone");
    const kept = h.cluster.get("v1", "PersistentVolumeClaim", "data-web-0");
    assert.ok(kept, "precondition: its claims are kept");

    // WHEN an instance of the same name is created again (another uid)
    h.cluster.createInstance("web", withStorage);
    h.cluster.reset();
    await h.run();

    // THEN its children are made, nothing is refused, and the kept claims are left for the StatefulSet to adopt
    // by name (claims are never an instance's children: none is written)
    assert.deepEqual(h.cluster.writeLines(), [
      "setFinalizers MyAppInstance/web",
      "apply Service/web",
      "apply Service/web-pods",
      "apply StatefulSet/web",
      "applyStatus MyAppInstance/web",
    ]);
    assert.deepEqual(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-0"), kept);
    h.cluster.rollOut("StatefulSet", "web");
    await h.run();
    assert.equal(h.cluster.instance("web")?.status?.phase, "Running");
    assert.notEqual(degraded(h)?.status, "True");
  });
});
