import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { desiredStatefulSet } from "../../../operator/desired/index.ts";
import {
  planStatefulSet,
  type ObservedClaim,
  type ObservedStorageClass,
  type ObservedWorkload,
} from "../../../operator/reconcile/index.ts";

function instance(storage: string, storageClassName?: string) {
  return {
    metadata: { name: "web", namespace: "shop", uid: "u1" },
    spec: {
      replicas: 2,
      image: "nginx:1.27",
      port: 8080,
      storage,
      storageReclaimPolicy: "Retain" as const,
      ...(storageClassName ? { storageClassName } : {}),
    },
  };
}

/** The live StatefulSet as our apply of `storage` left it. */
function live(storage: string, storageClassName?: string): ObservedWorkload {
  return structuredClone(desiredStatefulSet(instance(storage, storageClassName))) as unknown as ObservedWorkload;
}

function claim(ordinal: number, storage: string, storageClassName = "standard"): ObservedClaim {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: `data-web-${ordinal}`, namespace: "shop" },
    spec: { storageClassName, resources: { requests: { storage } } },
  };
}

const expandable = new Map<string, ObservedStorageClass | undefined>([
  [
    "standard",
    {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: "standard" },
      allowVolumeExpansion: true,
    },
  ],
]);
const fixed = new Map<string, ObservedStorageClass | undefined>([
  ["standard", { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "standard" } }],
]);

describe("planStatefulSet", () => {
  it("applies the desired StatefulSet when nothing about storage changes", () => {
    const plan = planStatefulSet(instance("1Gi"), live("1Gi"), [claim(0, "1Gi"), claim(1, "1Gi")], new Map());
    assert.deepEqual(plan, {
      desired: desiredStatefulSet(instance("1Gi")),
      recreate: false,
      expand: [],
      problem: undefined,
    });
  });

  it("creates a new StatefulSet as desired", () => {
    const plan = planStatefulSet(instance("1Gi"), undefined, [], new Map());
    assert.equal(plan.recreate, false);
    assert.deepEqual(plan.desired, desiredStatefulSet(instance("1Gi")));
  });

  it("grows every smaller claim and re-creates the StatefulSet when the class allows expansion", () => {
    const claims = [claim(0, "1Gi"), claim(1, "1Gi")];
    const plan = planStatefulSet(instance("2Gi"), live("1Gi"), claims, expandable);
    assert.deepEqual(plan.expand, claims);
    assert.equal(plan.recreate, true);
    assert.equal(plan.problem, undefined);
    assert.equal(plan.desired.spec.volumeClaimTemplates[0]?.spec.resources.requests.storage, "2Gi");
  });

  it("grows claims left behind by an earlier re-creation without re-creating again", () => {
    const plan = planStatefulSet(instance("2Gi"), live("2Gi"), [claim(0, "2Gi"), claim(1, "1Gi")], expandable);
    assert.deepEqual(
      plan.expand.map((c) => c.metadata.name),
      ["data-web-1"],
    );
    assert.equal(plan.recreate, false);
  });

  it("refuses, keeping the live claim template, when the class does not allow expansion", () => {
    const plan = planStatefulSet(instance("2Gi"), live("1Gi"), [claim(0, "1Gi"), claim(1, "1Gi")], fixed);
    assert.equal(plan.recreate, false);
    assert.deepEqual(plan.expand, []);
    assert.equal(plan.problem?.reason, "StorageExpansionUnsupported");
    assert.match(
      plan.problem?.message ?? "",
      /StorageClass "standard" of claims data-web-0, data-web-1 does not allow volume expansion/,
    );
    assert.equal(
      plan.desired.spec.volumeClaimTemplates[0]?.spec.resources.requests.storage,
      "1Gi",
      "an apply stays valid",
    );
    assert.equal(
      plan.desired.spec.template.spec.containers[0]?.image,
      "nginx:1.27",
      "everything else still follows the spec",
    );
  });

  it("names a missing class and a claim without a class", () => {
    const plan = planStatefulSet(
      instance("2Gi"),
      live("1Gi"),
      [claim(0, "1Gi", "gone"), claim(1, "1Gi", "")],
      new Map([["gone", undefined]]),
    );
    assert.match(plan.problem?.message ?? "", /StorageClass "gone" of claims data-web-0 does not exist/);
    assert.match(plan.problem?.message ?? "", /claims data-web-1 have no StorageClass/);
  });

  it("refuses to shrink", () => {
    const plan = planStatefulSet(instance("1Gi"), live("2Gi"), [], new Map());
    assert.equal(plan.problem?.reason, "StorageShrinkUnsupported");
    assert.equal(plan.desired.spec.volumeClaimTemplates[0]?.spec.resources.requests.storage, "2Gi");
  });

  it("refuses to change the class of existing volumes", () => {
    const plan = planStatefulSet(instance("1Gi", "fast"), live("1Gi", "slow"), [], new Map());
    assert.equal(plan.problem?.reason, "StorageClassChangeUnsupported");
    assert.equal(plan.desired.spec.volumeClaimTemplates[0]?.spec.storageClassName, "slow");
  });

  it("treats the same size in another notation as unchanged", () => {
    const plan = planStatefulSet(instance("1024Mi"), live("1Gi"), [claim(0, "1Gi")], new Map());
    assert.equal(plan.recreate, false);
    assert.deepEqual(plan.expand, []);
    assert.equal(plan.problem, undefined);
  });
});
