import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdmissionDeniedError, type KubeObject } from "../../../kube/index.ts";
import { renderableChartKinds } from "../../../api/index.ts";
import { RenderedChildren } from "../../../operator/chart/index.ts";
import { watchedOwnedKinds } from "../../../operator/watched-kinds.ts";
import { harness } from "./setup.ts";

const spec = { image: "nginx:1.27", replicas: 2, port: 8080, storage: "1Gi" };
const deleting = { whenDeleted: "Delete", whenScaled: "Retain" };
const retaining = { whenDeleted: "Retain", whenScaled: "Retain" };

/** A running instance with storage (StatefulSet web, claims data-web-0/1) in a cluster with a default class. */
async function runningInstance(instanceSpec: Record<string, unknown>) {
  const h = harness();
  h.cluster.put({
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: "standard", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
    provisioner: "example.com/local",
  });
  h.cluster.createInstance("web", instanceSpec);
  await h.run();
  h.cluster.provisionClaims("web", "standard");
  h.cluster.rollOut("StatefulSet", "web");
  await h.run();
  assert.equal(h.cluster.instance("web")?.status?.phase, "Running", "precondition: the instance runs");
  return h;
}

type Harness = Awaited<ReturnType<typeof runningInstance>>;

/**
 * A StatefulSet `name` as a chart renders it for the instance (its label, controlled by it), with claim template
 * `data`, observed by its controller, and `replicas` claims data-<name>-<n> that the StatefulSet controller gave
 * an owner reference to it (as it does under whenDeleted: Delete).
 */
function chartStatefulSet(h: Harness, name: string, retention: object, replicas: number): KubeObject {
  const instance = h.cluster.instance("web");
  const statefulSet = h.cluster.put({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name,
      namespace: "default",
      labels: { "app.kubernetes.io/managed-by": "myapp-operator", "myapp.example.com/chart-instance": "web" },
      ownerReferences: [
        {
          apiVersion: "example.com/v1",
          kind: "MyAppInstance",
          name: "web",
          uid: instance?.metadata.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      replicas,
      persistentVolumeClaimRetentionPolicy: retention,
      volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "1Gi" } } } }],
    },
    status: { observedGeneration: 1 },
  });
  for (let ordinal = 0; ordinal < replicas; ordinal++) {
    claim(`data-${name}-${ordinal}`, [ownerReference(statefulSet)]);
  }
  return statefulSet;

  function claim(claimName: string, ownerReferences: object[]) {
    h.cluster.put({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: claimName, namespace: "default", labels: { app: "db" }, ownerReferences },
      spec: { resources: { requests: { storage: "1Gi" } } },
      status: { phase: "Bound" },
    } as KubeObject);
  }
}

function ownerReference(statefulSet: KubeObject) {
  return { apiVersion: "apps/v1", kind: "StatefulSet", name: statefulSet.metadata.name, uid: statefulSet.metadata.uid };
}

function putClaim(h: Harness, name: string, ownerReferences: object[] = []): void {
  h.cluster.put({
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name, namespace: "default", ...(ownerReferences.length > 0 ? { ownerReferences } : {}) },
    spec: { resources: { requests: { storage: "1Gi" } } },
  } as KubeObject);
}

function owners(h: Harness, claim: string): string[] | undefined {
  return h.cluster
    .get("v1", "PersistentVolumeClaim", claim)
    ?.metadata.ownerReferences?.map((reference) => `${reference.kind}/${reference.name}`);
}

describe("finalize: the claims of a chart's StatefulSets under Retain", () => {
  it("reads whole a StatefulSet of which the cache kept the first claim templates only, and keeps every claim", async () => {
    // GIVEN an instance on Retain whose chart StatefulSet has 20 claim templates, each claim still owned by it, as
    // the operator's cache keeps it after a start (no render recorded yet: the first 16 templates, withheld)
    const h = await runningInstance(spec);
    const kept = watchedOwnedKinds(renderableChartKinds, new RenderedChildren());
    h.cluster.cacheKeeps = (object) => kept.find((k) => k.kind === object.kind)?.transform?.(object) ?? object;
    const db = chartStatefulSet(h, "web-db", retaining, 1);
    const templates = Array.from({ length: 20 }, (_, i) => `data${i}`);
    h.cluster.edit("apps/v1", "StatefulSet", "web-db", (o) => {
      (o["spec"] as { volumeClaimTemplates: object[] }).volumeClaimTemplates = templates.map((name) => ({
        metadata: { name },
        spec: { resources: { requests: { storage: "1Gi" } } },
      }));
    });
    h.cluster.edit("apps/v1", "StatefulSet", "web-db", (o) => {
      o["status"] = { observedGeneration: o.metadata.generation };
    });
    for (const template of templates) putClaim(h, `${template}-web-db-0`, [ownerReference(db)]);
    h.cluster.reset();

    // WHEN it is deleted
    h.cluster.deleteInstance("web");
    await h.run();

    // THEN the StatefulSet is read whole, and no claim keeps its owner reference (its StatefulSet would take it)
    assert.ok(h.cluster.liveReadLines.includes("find StatefulSet/web-db"));
    for (const template of templates) assert.deepEqual(owners(h, `${template}-web-db-0`), [], template);
  });

  it("takes the StatefulSet's owner references off its claims before any StatefulSet goes", async () => {
    // GIVEN an instance on Retain whose chart StatefulSet (now Retain) left owner references on its claims, one of
    // which has an owner of its own too
    const h = await runningInstance(spec);
    const db = chartStatefulSet(h, "web-db", retaining, 2);
    h.cluster.edit("v1", "PersistentVolumeClaim", "data-web-db-1", (o) => {
      o.metadata.ownerReferences = [
        { apiVersion: "v1", kind: "ConfigMap", name: "keeper", uid: "keeper-uid" },
        ...(o.metadata.ownerReferences ?? []),
      ];
    });
    h.cluster.reset();

    // WHEN it is deleted
    h.cluster.deleteInstance("web");
    const outcome = await h.run();

    // THEN the references go first, each removal tested on its uid, then the children, and the finalizer last
    assert.equal(outcome.requeueAfterMs, undefined);
    assert.deepEqual(h.cluster.writeLines(), [
      "jsonPatch PersistentVolumeClaim/data-web-db-0",
      "jsonPatch PersistentVolumeClaim/data-web-db-1",
      "delete StatefulSet/web",
      "delete Service/web",
      "delete Service/web-pods",
      "setFinalizers MyAppInstance/web",
    ]);
    const patch = h.cluster.requests.find((r) => r.verb === "jsonPatch" && r.name === "data-web-db-1")?.body;
    assert.deepEqual(patch, [
      { op: "test", path: "/metadata/ownerReferences/1/uid", value: db.metadata.uid },
      { op: "remove", path: "/metadata/ownerReferences/1" },
    ]);
    assert.deepEqual(owners(h, "data-web-db-0"), []);
    assert.deepEqual(owners(h, "data-web-db-1"), ["ConfigMap/keeper"], "someone else's reference stays");
    assert.equal(h.cluster.instance("web"), undefined, "the apiserver let it go");
    const retained = h.cluster.events.find((e) => e.reason === "RetainedVolumeClaims");
    assert.match(retained?.note ?? "", /Kept volume claims data-web-0, data-web-1, data-web-db-0, data-web-db-1 /);
  });

  it("makes a StatefulSet that still deletes claims keep them, and waits until its controller saw it", async () => {
    // GIVEN an instance switched to Retain while its render was pending: its chart StatefulSet still says Delete
    const h = await runningInstance(spec);
    chartStatefulSet(h, "web-db", deleting, 2);
    h.cluster.reset();

    // WHEN it is deleted
    h.cluster.deleteInstance("web");
    const first = await h.run();

    // THEN the StatefulSet is made to retain, and nothing else happens until the controller observed that
    assert.deepEqual(h.cluster.writeLines(), ["jsonPatch StatefulSet/web-db"]);
    assert.ok(first.requeueAfterMs !== undefined && first.requeueAfterMs > 0);
    const db = h.cluster.get<KubeObject & { spec: { persistentVolumeClaimRetentionPolicy: unknown } }>(
      "apps/v1",
      "StatefulSet",
      "web-db",
    );
    assert.deepEqual(db?.spec.persistentVolumeClaimRetentionPolicy, retaining);
    assert.ok(h.cluster.instance("web"), "the finalizer holds the instance");
    assert.deepEqual(owners(h, "data-web-db-0"), ["StatefulSet/web-db"]);
    h.cluster.reset();
    await h.run();
    assert.deepEqual(h.cluster.writeLines(), [], "not observed yet: still waiting");

    // WHEN the StatefulSet controller has observed the change THEN the references go, then the rest
    h.cluster.edit("apps/v1", "StatefulSet", "web-db", (o) => {
      o["status"] = { observedGeneration: o.metadata.generation };
    });
    h.cluster.reset();
    await h.run();
    assert.deepEqual(h.cluster.writeLines(), [
      "jsonPatch PersistentVolumeClaim/data-web-db-0",
      "jsonPatch PersistentVolumeClaim/data-web-db-1",
      "delete StatefulSet/web",
      "delete Service/web",
      "delete Service/web-pods",
      "setFinalizers MyAppInstance/web",
    ]);
    assert.deepEqual(owners(h, "data-web-db-1"), []);
    assert.equal(h.cluster.instance("web"), undefined);
  });

  it("takes references off the built-in StatefulSet's claims too (taken over from a chart), never another's", async () => {
    const h = await runningInstance(spec);
    const web = h.cluster.get("apps/v1", "StatefulSet", "web");
    assert.ok(web);
    h.cluster.edit("v1", "PersistentVolumeClaim", "data-web-0", (o) => {
      o.metadata.ownerReferences = [ownerReference(web)] as never;
    });
    putClaim(h, "data-other-0", [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "other", uid: "other-uid" }]);
    h.cluster.reset();

    h.cluster.deleteInstance("web");
    await h.run();

    assert.deepEqual(h.cluster.writeLines().slice(0, 2), [
      "jsonPatch PersistentVolumeClaim/data-web-0",
      "delete StatefulSet/web",
    ]);
    assert.deepEqual(owners(h, "data-web-0"), []);
    assert.deepEqual(owners(h, "data-other-0"), ["StatefulSet/other"]);
  });

  it("reads again rather than remove a reference blind when a claim changed since the list", async () => {
    const h = await runningInstance(spec);
    chartStatefulSet(h, "web-db", retaining, 1);
    const list = h.cluster.list.bind(h.cluster);
    h.cluster.list = async (apiVersion, kind, namespace, labelSelector, fieldSelector) => {
      const listed = await list(apiVersion, kind, namespace, labelSelector, fieldSelector);
      // Someone puts another owner first between the list and the patch.
      if (kind === "PersistentVolumeClaim" && fieldSelector) {
        h.cluster.edit("v1", "PersistentVolumeClaim", "data-web-db-0", (o) => {
          o.metadata.ownerReferences = [
            { apiVersion: "v1", kind: "ConfigMap", name: "keeper", uid: "keeper-uid" },
            ...(o.metadata.ownerReferences ?? []),
          ];
        });
      }
      return listed as never;
    };
    h.cluster.reset();

    h.cluster.deleteInstance("web");
    await assert.rejects(h.run(), /changed while its owner references were taken off/);

    assert.deepEqual(owners(h, "data-web-db-0"), ["ConfigMap/keeper", "StatefulSet/web-db"], "nothing removed");
    assert.ok(h.cluster.instance("web"), "the finalizer holds the instance");
  });
});

describe("finalize: when the StatefulSet controller or the admission policy stands in the way", () => {
  it("says why it cannot release a chart's claim, and holds the instance (nothing deleted)", async () => {
    // GIVEN a chart claim that its StatefulSet still owns, which the operator's admission policy refuses to patch
    const h = await runningInstance(spec);
    const webDb = chartStatefulSet(h, "web-db", retaining, 1);
    h.cluster.edit("v1", "PersistentVolumeClaim", "data-web-db-0", (o) => {
      o.metadata.ownerReferences = [ownerReference(webDb)] as never;
    });
    h.cluster.failNext(
      "jsonPatch",
      new AdmissionDeniedError(403, "denied by ValidatingAdmissionPolicy", "Forbidden"),
      "PersistentVolumeClaim",
    );
    h.cluster.reset();

    // WHEN it is deleted THEN the finalize step fails saying what to do, and nothing is deleted
    h.cluster.deleteInstance("web");
    await assert.rejects(h.run(), /data-web-db-0 is still owned by its StatefulSet.*kubectl patch pvc data-web-db-0/s);
    // (said on the instance too: a deleted instance's status is not written)
    const said = h.cluster.events.find((e) => e.reason === "ClaimNotReleased");
    assert.match(said?.note ?? "", /"path":"\/metadata\/ownerReferences\/0"/);
    assert.ok(h.cluster.instance("web"), "the finalizer holds the instance");
    assert.ok(h.cluster.get("apps/v1", "StatefulSet", "web-db"));
    assert.deepEqual(owners(h, "data-web-db-0"), ["StatefulSet/web-db"]);
  });
});

describe("finalize: the claims of a chart's StatefulSets under Delete", () => {
  it("leaves them to their StatefulSet's whenDeleted: Delete (the operator may not write a chart's claims)", async () => {
    // GIVEN an instance on Delete with a chart StatefulSet web-db that says whenDeleted: Delete (claims
    // data-web-db-0/1), and a look-alike claim of another StatefulSet
    const h = await runningInstance({ ...spec, storageReclaimPolicy: "Delete" });
    chartStatefulSet(h, "web-db", deleting, 2);
    putClaim(h, "data-web-db-2", [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "db-uid" }]);
    h.cluster.reset();

    // WHEN it is deleted
    h.cluster.deleteInstance("web");
    await h.run();

    // THEN the built-in template's claims are deleted by name, the chart's are left to go with their StatefulSet
    // (the garbage collector, after the instance), and the look-alike is untouched
    assert.deepEqual(h.cluster.writeLines(), [
      "delete StatefulSet/web",
      "delete Service/web",
      "delete Service/web-pods",
      "delete PersistentVolumeClaim/data-web-0",
      "delete PersistentVolumeClaim/data-web-1",
      "setFinalizers MyAppInstance/web",
    ]);
    const going = h.cluster.events.find((e) => e.reason === "DeletingVolumeClaims");
    assert.match(going?.note ?? "", /data-web-db-0, data-web-db-1 go with their StatefulSet/);
    const deleted = h.cluster.events.find((e) => e.reason === "DeletedVolumeClaims");
    assert.match(deleted?.note ?? "", /data-web-0, data-web-1 \(/);
  });

  it("releases a claim older than the instance that its StatefulSet mounted (an earlier namesake's) before it goes", async () => {
    // GIVEN an instance on Delete whose chart StatefulSet web-db (whenDeleted: Delete) owns data-web-db-0/1, of which
    // data-web-db-0 was made before the instance (an earlier instance kept it, and web-db mounted it by its name)
    const h = await runningInstance({ ...spec, storageReclaimPolicy: "Delete" });
    chartStatefulSet(h, "web-db", deleting, 2);
    h.cluster.edit("v1", "PersistentVolumeClaim", "data-web-db-0", (o) => {
      o.metadata.creationTimestamp = "2025-06-01T10:00:00Z";
    });
    h.cluster.reset();

    // WHEN it is deleted
    h.cluster.deleteInstance("web");
    await h.run();
    // THEN the StatefulSet is first made to keep its claims, and the finalizer waits for its controller
    assert.deepEqual(h.cluster.writeLines(), ["jsonPatch StatefulSet/web-db"]);
    assert.ok(h.cluster.instance("web"), "the finalizer holds the instance");
    h.cluster.edit("apps/v1", "StatefulSet", "web-db", (o) => {
      o["status"] = { observedGeneration: o.metadata.generation };
    });
    h.cluster.reset();
    await h.run();

    // THEN the older claim is released (nothing takes it along) and kept, said in a warning; the instance's own
    // claims of the template go
    assert.deepEqual(h.cluster.writeLines().slice(0, 1), ["jsonPatch PersistentVolumeClaim/data-web-db-0"]);
    assert.deepEqual(owners(h, "data-web-db-0"), []);
    assert.ok(h.cluster.writeLines().includes("delete PersistentVolumeClaim/data-web-0"));
    const warnings = h.cluster.events.filter((e) => e.reason === "RetainedVolumeClaims").map((e) => e.note);
    assert.ok(
      warnings.some((note) =>
        /^Kept volume claims data-web-db-0 although storageReclaimPolicy is Delete: they are older than this instance/.test(
          note,
        ),
      ),
      warnings.join("\n"),
    );
    assert.equal(h.cluster.instance("web"), undefined);
  });

  it("keeps, with a warning, a claim its StatefulSet does not own (a replica scaled away before it said Delete)", async () => {
    const h = await runningInstance({ ...spec, storageReclaimPolicy: "Delete" });
    chartStatefulSet(h, "web-db", deleting, 2);
    h.cluster.edit("v1", "PersistentVolumeClaim", "data-web-db-1", (o) => {
      o.metadata.ownerReferences = [];
    });
    h.cluster.reset();

    h.cluster.deleteInstance("web");
    await h.run();

    const going = h.cluster.events.find((e) => e.reason === "DeletingVolumeClaims");
    assert.match(going?.note ?? "", /Volume claims data-web-db-0 go with/);
    const warning = h.cluster.events.find((e) => e.reason === "RetainedVolumeClaims");
    assert.match(warning?.note ?? "", /Kept volume claims data-web-db-1 although storageReclaimPolicy is Delete/);
    assert.ok(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-db-1"));
  });

  it("keeps them, with a warning, while their StatefulSet does not say Delete yet (a render not applied)", async () => {
    const h = await runningInstance({ ...spec, storageReclaimPolicy: "Delete" });
    chartStatefulSet(h, "web-db", retaining, 2);
    h.cluster.reset();

    h.cluster.deleteInstance("web");
    await h.run();

    for (const kept of ["data-web-db-0", "data-web-db-1"])
      assert.ok(h.cluster.get("v1", "PersistentVolumeClaim", kept));
    assert.equal(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-0"), undefined);
    const warning = h.cluster.events.find((e) => e.reason === "RetainedVolumeClaims");
    assert.match(
      warning?.note ?? "",
      /Kept volume claims data-web-db-0, data-web-db-1 although storageReclaimPolicy is Delete/,
    );
  });

  it("never counts a StatefulSet the instance does not control", async () => {
    const h = await runningInstance({ ...spec, storageReclaimPolicy: "Delete" });
    const foreign = chartStatefulSet(h, "web-db", retaining, 1);
    h.cluster.edit("apps/v1", "StatefulSet", "web-db", (o) => {
      o.metadata.ownerReferences = [];
    });
    assert.ok(foreign.metadata.uid);
    h.cluster.reset();

    h.cluster.deleteInstance("web");
    await h.run();

    assert.ok(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-db-0"));
    assert.equal(h.cluster.get("v1", "PersistentVolumeClaim", "data-web-0"), undefined);
  });
});
