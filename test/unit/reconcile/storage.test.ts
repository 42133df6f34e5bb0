import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { desiredStatefulSet } from "../../../operator/desired/index.ts";
import {
  planStatefulSet,
  storageClassProblem,
  unboundClaimsByClass,
  volumeGrowth,
  type ObservedClaim,
  type ObservedStorageClass,
  type ObservedWorkload,
  type WaitingClaims,
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

describe("planStatefulSet: the governing Service", () => {
  it("re-creates a StatefulSet made before the headless Service existed, keeping its pods", () => {
    // GIVEN a live StatefulSet governed by the ClusterIP Service "web" (what older operators made)
    const old = live("1Gi");
    const before = { ...old, spec: { ...old.spec, serviceName: "web" } } as ObservedWorkload;
    // WHEN planned
    const plan = planStatefulSet(instance("1Gi"), before, [claim(0, "1Gi"), claim(1, "1Gi")], new Map());
    // THEN it is re-created (serviceName is immutable) with the headless governing Service
    assert.equal(plan.recreate, true);
    assert.match(plan.recreateReason ?? "", /headless governing Service web-pods/);
    assert.equal(plan.desired.spec.serviceName, "web-pods");
  });

  it("keeps the live serviceName when a problem stops the re-creation, so the apply stays valid", () => {
    const old = live("2Gi");
    const before = { ...old, spec: { ...old.spec, serviceName: "web" } } as ObservedWorkload;
    const plan = planStatefulSet(instance("1Gi"), before, [], new Map());
    assert.equal(plan.problem?.reason, "StorageShrinkUnsupported");
    assert.equal(plan.recreate, false);
    assert.equal(plan.desired.spec.serviceName, "web");
  });
});

describe("volumeGrowth", () => {
  const sts = { name: "web", replicas: 2 };
  const bound = (ordinal: number, capacity: string, extra: Partial<NonNullable<ObservedClaim["status"]>> = {}) => ({
    ...claim(ordinal, "2Gi"),
    status: { phase: "Bound", capacity: { storage: capacity }, ...extra },
  });

  it("is complete when every Bound claim's capacity reached the size, whatever the notation", () => {
    assert.equal(volumeGrowth([bound(0, "2Gi"), bound(1, "2048Mi")], "2Gi", sts), undefined);
  });

  it("ignores the claim of a replica scaled away: no pod will finish its resize", () => {
    assert.equal(volumeGrowth([bound(0, "2Gi"), bound(2, "1Gi")], "2Gi", sts), undefined);
  });

  it("ignores claims still Pending: they are provisioned at the new size", () => {
    assert.equal(volumeGrowth([{ ...claim(0, "2Gi"), status: { phase: "Pending" } }], "2Gi", sts), undefined);
  });

  it("is a step while a capacity lags behind its request, quoting the resize condition", () => {
    const growth = volumeGrowth(
      [bound(0, "2Gi"), bound(1, "1Gi", { conditions: [{ type: "Resizing", status: "True" }] })],
      "2Gi",
      sts,
    );
    assert.deepEqual(growth, {
      step: { reason: "ExpandingVolumes", message: "growing volume claims to 2Gi: data-web-1 has 1Gi (Resizing)" },
    });
  });

  it("costs what the claims that exist cost, whatever the replica count (the tenant's, up to 2^31 - 1)", () => {
    // GIVEN the largest replica count the CRD allows and two claims, one lagging
    const huge = { name: "web", replicas: 2_147_483_647 };
    // WHEN growth is judged THEN only the existing claims are looked at (counting to replicas would exhaust the heap)
    assert.deepEqual(volumeGrowth([bound(0, "2Gi"), bound(1, "1Gi")], "2Gi", huge), {
      step: { reason: "ExpandingVolumes", message: "growing volume claims to 2Gi: data-web-1 has 1Gi" },
    });
  });

  it("is a problem when the driver declared the resize infeasible", () => {
    const growth = volumeGrowth(
      [bound(0, "1Gi", { allocatedResourceStatuses: { storage: "NodeResizeInfeasible" } })],
      "2Gi",
      sts,
    );
    assert.ok(growth && "problem" in growth);
    assert.equal(growth.problem.reason, "VolumeExpansionInfeasible");
  });
});

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

function pending(ordinal: number, storageClassName?: string): ObservedClaim {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: `data-web-${ordinal}`, namespace: "shop" },
    spec: {
      ...(storageClassName !== undefined ? { storageClassName } : {}),
      resources: { requests: { storage: "1Gi" } },
    },
    status: { phase: "Pending" },
  };
}

function bound(ordinal: number): ObservedClaim {
  return { ...claim(ordinal, "1Gi"), status: { phase: "Bound" } };
}

function storageClass(name: string, annotations?: Record<string, string>): ObservedStorageClass {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name, ...(annotations ? { annotations } : {}) },
  };
}

/** Claims waiting for a class, as unboundClaimsByClass groups them. */
function waiting(names: string[], count = names.length): WaitingClaims {
  return { names, count };
}

describe("unboundClaimsByClass", () => {
  const withClass = desiredStatefulSet(instance("1Gi", "fast"));
  const withoutClass = desiredStatefulSet(instance("1Gi"));

  it("is empty when every claim the replicas need is Bound, so a running instance needs no class", () => {
    assert.deepEqual(unboundClaimsByClass(withClass, [bound(0), bound(1)]), new Map());
  });

  it("gives claims not made yet the template's class, or the default (undefined) when it names none", () => {
    assert.deepEqual(unboundClaimsByClass(withClass, []), new Map([["fast", waiting(["data-web-0", "data-web-1"])]]));
    assert.deepEqual(unboundClaimsByClass(withoutClass, [bound(0)]), new Map([[undefined, waiting(["data-web-1"])]]));
  });

  it("keeps the class a waiting claim was made with, even when the template names another", () => {
    const grouped = unboundClaimsByClass(withClass, [pending(0, "old"), pending(1)]);
    assert.deepEqual(
      grouped,
      new Map([
        ["old", waiting(["data-web-0"])],
        [undefined, waiting(["data-web-1"])],
      ]),
    );
  });

  it("leaves out claims with an explicit empty class (static volumes) and claims beyond the replica count", () => {
    const grouped = unboundClaimsByClass(withClass, [pending(0, ""), bound(1), pending(2, "fast")]);
    assert.deepEqual(grouped, new Map());
  });

  it("names the first claims not made yet and counts the rest, whatever the replica count", () => {
    // GIVEN the largest replica count the CRD allows, with claims 0 (Bound) and 2 (Pending) made
    const huge = desiredStatefulSet({
      ...instance("1Gi", "fast"),
      spec: { ...instance("1Gi", "fast").spec, replicas: 2_147_483_647 },
    });
    // WHEN the unbound claims are grouped THEN the work follows the claims that exist, not the replica count
    assert.deepEqual(
      unboundClaimsByClass(huge, [bound(0), pending(2, "fast")]),
      new Map([["fast", waiting(["data-web-2", "data-web-1", "data-web-3"], 2_147_483_646)]]),
    );
  });

  it("is empty with zero replicas", () => {
    const none = desiredStatefulSet({
      ...instance("1Gi", "fast"),
      spec: { ...instance("1Gi", "fast").spec, replicas: 0 },
    });
    assert.deepEqual(unboundClaimsByClass(none, []), new Map());
  });
});

describe("storageClassProblem", () => {
  it("is undefined when nothing waits or each class that claims wait for exists", () => {
    assert.equal(storageClassProblem(new Map(), []), undefined);
    assert.equal(storageClassProblem(new Map([["fast", waiting(["data-web-0"])]]), [storageClass("fast")]), undefined);
  });

  it("names a missing class and its claims, and says to create it or re-create the instance", () => {
    const problem = storageClassProblem(new Map([["fast", waiting(["data-web-0", "data-web-1"])]]), [
      storageClass("slow"),
    ]);
    assert.equal(problem?.reason, "StorageClassNotFound");
    assert.equal(
      problem?.message,
      'StorageClass "fast" does not exist, so volume claims data-web-0, data-web-1 cannot be provisioned and their ' +
        'pods cannot start. Create StorageClass "fast" and the instance continues by itself, or delete the instance ' +
        "(and any Pending claims it leaves) and create it again with a StorageClass that exists: " +
        "spec.storageClassName cannot change once spec.storage is set",
    );
  });

  it("needs a class annotated as the default (GA or beta annotation) for claims that name none", () => {
    const claims = new Map([[undefined, waiting(["data-web-0"])]]);
    const gaDefault = storageClass("a", { "storageclass.kubernetes.io/is-default-class": "true" });
    const betaDefault = storageClass("b", { "storageclass.beta.kubernetes.io/is-default-class": "true" });
    const notDefault = storageClass("c", { "storageclass.kubernetes.io/is-default-class": "false" });
    assert.equal(storageClassProblem(claims, [notDefault, gaDefault]), undefined);
    assert.equal(storageClassProblem(claims, [betaDefault]), undefined);
    const problem = storageClassProblem(claims, [notDefault, storageClass("d")]);
    assert.equal(problem?.reason, "NoDefaultStorageClass");
    assert.match(
      problem?.message ?? "",
      /^spec\.storageClassName is not set and the cluster has no default StorageClass/,
    );
    assert.match(problem?.message ?? "", /create it again with spec\.storageClassName set/);
  });

  it("lists at most three claims and counts the others", () => {
    const problem = storageClassProblem(
      new Map([["fast", waiting(["data-web-0", "data-web-1", "data-web-2"], 5)]]),
      [],
    );
    assert.match(problem?.message ?? "", /volume claims data-web-0, data-web-1, data-web-2 and 2 more cannot/);
  });
});
