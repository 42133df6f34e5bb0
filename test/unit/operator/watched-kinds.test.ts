/**
 * What the informer cache keeps of a chart's objects (operator/watched-kinds.ts with operator/chart/rendered-children.ts):
 * whole only what the instance's current render names, at about the size the render makes it; a tenant's objects
 * that carry the chart's label and name the instance as their controller, uid and all, only as their identity.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderableChartKinds } from "../../../api/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import { isContentWithheld, keptBytes, RenderedChildren } from "../../../operator/chart/index.ts";
import { maxTemplateChildBytes, statefulSetAsRead, watchedOwnedKinds } from "../../../operator/watched-kinds.ts";

const instance = { namespace: "team", name: "holder" };
const controller = { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "holder", uid: "i1", controller: true };
const chartLabels = {
  "app.kubernetes.io/managed-by": "myapp-operator",
  "myapp.example.com/chart-instance": "holder",
};
const megabyte = "x".repeat(1024 * 1024);

/** A ConfigMap in team labelled as holder's chart and controlled by holder (uid i1), as anyone there may write one. */
const configMap = (name: string, data: Record<string, string>, uid = "i1"): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name,
    namespace: "team",
    uid: `cm-${name}`,
    resourceVersion: "5",
    creationTimestamp: "2030-01-01T00:00:00Z",
    labels: chartLabels,
    annotations: { note: "a tenant's" },
    ownerReferences: [{ ...controller, uid }],
    managedFields: [{ manager: "kubectl" }],
  },
  data,
});

const transformOf = (rendered: RenderedChildren, kind: string) => {
  const watched = watchedOwnedKinds(renderableChartKinds, rendered).find((candidate) => candidate.kind === kind);
  assert.ok(watched?.transform, `${kind} is watched`);
  return watched.transform;
};

describe("watchedOwnedKinds: a chart's objects", () => {
  it("keeps a tenant's large ConfigMaps labelled as an instance's chart and controlled by it as identities", () => {
    // GIVEN instance holder, whose chart never rendered (so nothing is recorded for it, and nothing pruned)
    const rendered = new RenderedChildren();
    const transform = transformOf(rendered, "ConfigMap");
    // WHEN the watch delivers 300 ConfigMaps of 1 MB that say they are its chart's
    const kept = Array.from({ length: 300 }, (_, n) => transform(configMap(`forged-${n}`, { blob: megabyte })));
    // THEN each is its identity only: a few hundred bytes, marked as such, its data and annotations gone
    for (const object of kept) {
      assert.equal(object["data"], undefined);
      assert.equal(object.metadata.annotations, undefined);
      assert.ok(isContentWithheld(object));
    }
    assert.ok(JSON.stringify(kept).length < 300 * 1_000, "300 identities weigh less than 300 KB");
    assert.deepEqual(kept[0]?.metadata.ownerReferences, [controller]);

    // WHEN holder renders (a ConfigMap "config"), the tenant's other names stay identities
    rendered.record(instance, "i1", [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "config" } }]);
    assert.equal(transform(configMap("forged-0", { blob: megabyte }))["data"], undefined);
  });

  it("keeps whole what the render names, while it is about the size the render makes it", () => {
    // GIVEN holder's render names ConfigMap "config" with one key
    const rendered = new RenderedChildren();
    const transform = transformOf(rendered, "ConfigMap");
    const desired = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "config" }, data: { a: "1" } };
    rendered.record(instance, "i1", [desired]);

    // WHEN the watch delivers it as applied THEN it is kept whole, without managedFields
    const applied = transform(configMap("config", { a: "1" }));
    assert.deepEqual(applied["data"], { a: "1" });
    assert.equal(applied.metadata.managedFields, undefined);
    assert.ok(!isContentWithheld(applied));

    // WHEN someone adds a megabyte to it THEN it is its identity (the chart reads it live when it needs it)
    const grown = transform(configMap("config", { a: "1", blob: megabyte }));
    assert.equal(grown["data"], undefined);
    assert.ok(isContentWithheld(grown));
    // ... up to twice what the render sets plus 16 KiB it is still kept whole
    const room = "y".repeat(keptBytes(JSON.stringify(desired).length) - JSON.stringify(applied).length - 100);
    assert.ok(transform(configMap("config", { a: "1", room }))["data"]);

    // WHEN an object of that name says another instance of that name (an earlier uid) controls it THEN identity
    assert.equal(transform(configMap("config", { a: "1" }, "i0"))["data"], undefined);

    // WHEN the instance is forgotten (gone, being deleted, or no chart any more) THEN identity again
    rendered.forget(instance);
    assert.equal(transform(configMap("config", { a: "1" }))["data"], undefined);
  });

  it("keeps of a StatefulSet an instance controls outside its render what the finalizer reads, bounded", () => {
    // GIVEN a StatefulSet labelled as holder's chart and controlled by it, with 1 MB of annotations and 10,000
    // claim templates, that no render names
    const rendered = new RenderedChildren();
    const transform = transformOf(rendered, "StatefulSet");
    const template = (n: number) => ({
      metadata: { name: `data${n}`, labels: { big: "x".repeat(60) } },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    });
    const statefulSet: KubeObject = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: {
        name: "db",
        namespace: "team",
        uid: "s1",
        resourceVersion: "9",
        generation: 3,
        labels: chartLabels,
        annotations: { big: megabyte },
        ownerReferences: [controller],
      },
      spec: {
        replicas: 0,
        persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete", whenScaled: "Retain" },
        volumeClaimTemplates: Array.from({ length: 10_000 }, (_, n) => template(n)),
      },
      status: { observedGeneration: 2, replicas: 0 },
    };

    // WHEN the watch delivers it
    const kept = transform(statefulSet);

    // THEN it keeps its retention, generations and first claim templates, a few KB whatever it weighs
    assert.ok(isContentWithheld(kept));
    assert.equal(kept.metadata.generation, 3);
    assert.equal(kept.metadata.annotations, undefined);
    const spec = kept["spec"] as { volumeClaimTemplates: unknown[]; persistentVolumeClaimRetentionPolicy: unknown };
    assert.deepEqual(spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: "Delete", whenScaled: "Retain" });
    assert.equal(spec.volumeClaimTemplates.length, 16);
    assert.deepEqual(spec.volumeClaimTemplates[0], {
      metadata: { name: "data0" },
      spec: { resources: { requests: { storage: "1Gi" } } },
    });
    assert.deepEqual(kept["status"], { observedGeneration: 2 });
    assert.ok(JSON.stringify(kept).length < 4_000, `${JSON.stringify(kept).length} bytes`);
    assert.deepEqual(kept, { ...statefulSetAsRead(statefulSet), contentWithheld: true });

    // ... and one no instance controls is its identity only
    const uncontrolled = transform({ ...statefulSet, metadata: { ...statefulSet.metadata, ownerReferences: [] } });
    assert.equal(uncontrolled["spec"], undefined);
  });
});

describe("watchedOwnedKinds: the built-in template's children", () => {
  it("keeps whole a child named as the template names it, up to a size no template child reaches", () => {
    // GIVEN a Deployment named as instance holder's, controlled by it (the operator's, or a tenant's made so)
    const transform = transformOf(new RenderedChildren(), "Deployment");
    const deployment = (note: string): KubeObject => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "holder",
        namespace: "team",
        uid: "d1",
        resourceVersion: "5",
        labels: { "app.kubernetes.io/managed-by": "myapp-operator" },
        annotations: { note },
        ownerReferences: [controller],
      },
      spec: { replicas: 2 },
    });
    // THEN as the template makes it, it is kept whole
    const usual = transform(deployment("small"));
    assert.deepEqual(usual["spec"], { replicas: 2 });
    assert.equal(isContentWithheld(usual), false);
    // and one someone made larger than that is its identity (the reconcile reads it live)
    const inflated = transform(deployment("x".repeat(maxTemplateChildBytes)));
    assert.equal(inflated["spec"], undefined);
    assert.equal(inflated.metadata.annotations, undefined);
    assert.ok(isContentWithheld(inflated));
  });
});
