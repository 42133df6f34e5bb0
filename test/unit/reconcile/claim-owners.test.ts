import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { KubeObject } from "../../../kube/index.ts";
import {
  claimsOf,
  observed,
  releaseClaimPatch,
  retainClaimsPatch,
  retainsClaims,
  type ClaimMaker,
} from "../../../operator/reconcile/claim-owners.ts";

const statefulSet = (fields: Partial<ClaimMaker["spec"]> = {}, metadata: Partial<KubeObject["metadata"]> = {}) =>
  ({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "db", uid: "db-uid", generation: 2, ...metadata },
    spec: { volumeClaimTemplates: [{ metadata: { name: "data" } }, { metadata: { name: "logs" } }], ...fields },
  }) as ClaimMaker;

const reference = (kind: string, uid: string) => ({ apiVersion: "v1", kind, name: uid, uid });
const claim = (name: string, ownerReferences?: ReturnType<typeof reference>[]): KubeObject => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name, ...(ownerReferences ? { ownerReferences } : {}) },
});

describe("retainsClaims and observed", () => {
  test("retain only when neither deletion nor scale-down deletes claims (unset is Retain)", () => {
    assert.equal(retainsClaims(statefulSet()), true);
    const policy = (whenDeleted: string, whenScaled: string) =>
      statefulSet({ persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled } });
    assert.equal(retainsClaims(policy("Retain", "Retain")), true);
    assert.equal(retainsClaims(policy("Delete", "Retain")), false);
    assert.equal(retainsClaims(policy("Retain", "Delete")), false);
  });

  test("observed once the controller's status caught up with the generation", () => {
    const withStatus = (observedGeneration?: number) =>
      ({ ...statefulSet(), status: observedGeneration === undefined ? {} : { observedGeneration } }) as ClaimMaker;
    assert.equal(observed(withStatus(2)), true);
    assert.equal(observed(withStatus(1)), false);
    assert.equal(observed(withStatus()), false);
  });
});

describe("retainClaimsPatch", () => {
  test("sets Retain/Retain on the StatefulSet with this uid only", () => {
    assert.deepEqual(retainClaimsPatch(statefulSet()), [
      { op: "test", path: "/metadata/uid", value: "db-uid" },
      {
        op: "add",
        path: "/spec/persistentVolumeClaimRetentionPolicy",
        value: { whenDeleted: "Retain", whenScaled: "Retain" },
      },
    ]);
  });
});

describe("releaseClaimPatch", () => {
  test("removes the references to the given StatefulSets, last index first, each tested on its uid", () => {
    const uids = new Set(["a", "b"]);
    const owned = claim("data-db-0", [
      reference("StatefulSet", "a"),
      reference("ConfigMap", "x"),
      reference("StatefulSet", "b"),
    ]);
    assert.deepEqual(releaseClaimPatch(owned, uids), [
      { op: "test", path: "/metadata/ownerReferences/2/uid", value: "b" },
      { op: "remove", path: "/metadata/ownerReferences/2" },
      { op: "test", path: "/metadata/ownerReferences/0/uid", value: "a" },
      { op: "remove", path: "/metadata/ownerReferences/0" },
    ]);
  });

  test("is empty for a claim without such a reference", () => {
    assert.deepEqual(releaseClaimPatch(claim("data-db-0"), new Set(["a"])), []);
    assert.deepEqual(releaseClaimPatch(claim("data-db-0", [reference("StatefulSet", "other")]), new Set(["a"])), []);
  });
});

describe("claimsOf", () => {
  test("are the claims named <template>-<StatefulSet>-<ordinal> of its templates, ordinals digits only", () => {
    const claims = [
      claim("data-db-0"),
      claim("logs-db-12"),
      claim("data-db-0", [reference("StatefulSet", "db-uid")]),
      claim("data-db-"),
      claim("data-db-x"),
      claim("data-db-1-0"),
      claim("cache-db-0"),
      claim("data-dbx-0"),
      claim("data-web-db-0"),
    ];
    assert.deepEqual(
      claimsOf(statefulSet(), claims).map((c) => c.metadata.name),
      ["data-db-0", "logs-db-12", "data-db-0"],
    );
  });

  test("never one that another StatefulSet owns (a look-alike name of someone else's)", () => {
    // Template "data" of StatefulSet "web-db" and template "data-web" of StatefulSet "db" both name data-web-db-0.
    const theirs = claim("data-web-db-0", [reference("StatefulSet", "db-uid")]);
    const ours = statefulSet({ volumeClaimTemplates: [{ metadata: { name: "data" } }] }, { name: "web-db", uid: "w" });
    assert.deepEqual(claimsOf(ours, [theirs]), []);
    assert.deepEqual(claimsOf(statefulSet({ volumeClaimTemplates: [] }), [claim("data-db-0")]), []);
  });
});
