import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { desiredService, desiredStatefulSet } from "../../../operator/desired/index.ts";
import { isSubset, jsonEqual } from "../../../operator/desired/index.ts";
import { maxQuantityLength } from "../../../api/index.ts";

const input = {
  metadata: { name: "web", namespace: "shop", uid: "u1" },
  spec: { replicas: 2, image: "nginx:1.27", port: 8080, storage: "1Gi", storageReclaimPolicy: "Retain" as const },
};

describe("isSubset: scalars and maps", () => {
  it("is true for equal values and false for different ones", () => {
    assert.ok(isSubset({ replicas: 2 }, { replicas: 2 }));
    assert.ok(!isSubset({ replicas: 2 }, { replicas: 3 }));
    assert.ok(!isSubset({ image: "a" }, { image: "b" }));
    assert.ok(!isSubset({ enabled: true }, { enabled: false }));
  });

  it("ignores fields only the observed object has (server defaults, other managers)", () => {
    assert.ok(isSubset({ spec: { replicas: 2 } }, { spec: { replicas: 2, revisionHistoryLimit: 10 }, status: {} }));
  });

  it("requires every desired field to be present", () => {
    assert.ok(!isSubset({ spec: { replicas: 2 } }, { spec: {} }));
    assert.ok(!isSubset({ spec: { replicas: 2 } }, {}));
    assert.ok(!isSubset({ spec: { replicas: 2 } }, undefined));
  });

  it("treats label maps as subsets: extra labels are fine, missing or changed ones are not", () => {
    const desired = { metadata: { labels: { a: "1", b: "2" } } };
    assert.ok(isSubset(desired, { metadata: { labels: { a: "1", b: "2", c: "3" } } }));
    assert.ok(!isSubset(desired, { metadata: { labels: { a: "1" } } }));
    assert.ok(!isSubset(desired, { metadata: { labels: { a: "1", b: "x" } } }));
  });

  it("requires an empty desired object to exist (an emptyDir volume source)", () => {
    assert.ok(isSubset({ emptyDir: {} }, { emptyDir: {} }));
    assert.ok(isSubset({ emptyDir: {} }, { emptyDir: { medium: "" } }));
    assert.ok(!isSubset({ emptyDir: {} }, { hostPath: { path: "/x" } }));
  });

  it("skips undefined desired fields, as JSON would", () => {
    assert.ok(isSubset({ storageClassName: undefined, a: 1 }, { a: 1 }));
  });

  it("compares a key named __proto__ (a chart can render one) as data, not as the observed object's prototype", () => {
    assert.ok(!isSubset(JSON.parse('{"__proto__":{}}'), {}));
    assert.ok(!isSubset(JSON.parse('{"spec":{"constructor":{}}}'), { spec: {} }));
    assert.ok(isSubset(JSON.parse('{"__proto__":{"a":1}}'), JSON.parse('{"__proto__":{"a":1},"b":2}')));
  });

  it("does not mistake an object for a scalar or a list", () => {
    assert.ok(!isSubset({ a: { b: 1 } }, { a: "b=1" }));
    assert.ok(!isSubset({ a: { b: 1 } }, { a: [{ b: 1 }] }));
    assert.ok(!isSubset({ a: "x" }, { a: { x: true } }));
  });
});

describe("isSubset: quantities", () => {
  it("compares resource quantities by value in requests, limits and capacity", () => {
    assert.ok(isSubset({ requests: { storage: "1Gi" } }, { requests: { storage: "1024Mi" } }));
    assert.ok(isSubset({ limits: { cpu: "0.5" } }, { limits: { cpu: "500m" } }));
    assert.ok(isSubset({ capacity: { storage: "1G" } }, { capacity: { storage: "1000M" } }));
    assert.ok(!isSubset({ requests: { storage: "1Gi" } }, { requests: { storage: "1G" } }), "1Gi is not 1G");
    assert.ok(!isSubset({ requests: { storage: "2Gi" } }, { requests: { storage: "1Gi" } }));
  });

  it("compares other strings literally, even when they look like quantities", () => {
    assert.ok(!isSubset({ labels: { version: "1Gi" } }, { labels: { version: "1024Mi" } }));
    assert.ok(!isSubset({ image: "app:1.0" }, { image: "app:1" }));
  });

  it("is false when a quantity does not parse", () => {
    assert.ok(!isSubset({ requests: { storage: "lots" } }, { requests: { storage: "lots!" } }));
  });

  it("does not parse a quantity over maxQuantityLength (a chart's): unequal, so the apply goes out, unless the same text", () => {
    // GIVEN a chart's request of 1Gi written with 70 leading zeros: the same value, but a length that, a million
    // digits long, cost the parser ~50 ms on every reconcile
    const long = `${"0".repeat(70)}1Gi`;
    assert.ok(long.length > maxQuantityLength);
    // THEN it is not equal to the live value (equal would hide a change: the apiserver judges it instead)
    assert.ok(!isSubset({ requests: { memory: long } }, { requests: { memory: "1Gi" } }));
    assert.ok(!isSubset({ requests: { memory: "1Gi" } }, { requests: { memory: long } }));
    assert.ok(
      !isSubset({ limits: { cpu: `1${"0".repeat(3_000_000)}` } }, { limits: { cpu: `1${"0".repeat(3_000_000)}m` } }),
    );
    // and the very same text still is (no parse needed), as is one at the limit
    assert.ok(isSubset({ limits: { cpu: long } }, { limits: { cpu: long } }));
    const atLimit = `${"0".repeat(maxQuantityLength - 3)}1Gi`;
    assert.ok(isSubset({ requests: { storage: atLimit } }, { requests: { storage: "1024Mi" } }));
  });
});

describe("isSubset: int-or-string", () => {
  it("equates a number with its decimal string", () => {
    assert.ok(isSubset({ targetPort: 8080 }, { targetPort: "8080" }));
    assert.ok(isSubset({ targetPort: "8080" }, { targetPort: 8080 }));
  });

  it("does not equate a number with a named port or a percentage", () => {
    assert.ok(!isSubset({ targetPort: 8080 }, { targetPort: "http" }));
    assert.ok(!isSubset({ maxSurge: 1 }, { maxSurge: "1%" }));
  });
});

describe("isSubset: lists", () => {
  it("matches keyed items by name, in any order, with extra observed items allowed", () => {
    const desired = { containers: [{ name: "app", image: "a" }] };
    assert.ok(
      isSubset(desired, {
        containers: [
          { name: "sidecar", image: "s" },
          { name: "app", image: "a", tty: false },
        ],
      }),
    );
    assert.ok(!isSubset(desired, { containers: [{ name: "app", image: "b" }] }));
    assert.ok(!isSubset(desired, { containers: [{ name: "other", image: "a" }] }));
  });

  it("matches ownerReferences by uid, so another owner's reference is fine", () => {
    const ours = { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "web", uid: "u1", controller: true };
    assert.ok(isSubset({ ownerReferences: [ours] }, { ownerReferences: [{ uid: "u0", name: "x" }, ours] }));
    assert.ok(!isSubset({ ownerReferences: [ours] }, { ownerReferences: [{ ...ours, uid: "u2" }] }));
    assert.ok(!isSubset({ ownerReferences: [ours] }, { ownerReferences: [{ ...ours, controller: false }] }));
  });

  it("matches claim templates by metadata.name", () => {
    const desired = [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "1Gi" } } } }];
    const observed = [
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "data" },
        spec: { resources: { requests: { storage: "1Gi" } }, volumeMode: "Filesystem" },
      },
    ];
    assert.ok(isSubset({ volumeClaimTemplates: desired }, { volumeClaimTemplates: observed }));
  });

  it("compares unkeyed lists item by item with equal length (atomic lists)", () => {
    assert.ok(isSubset({ accessModes: ["ReadWriteOnce"] }, { accessModes: ["ReadWriteOnce"] }));
    assert.ok(!isSubset({ accessModes: ["ReadWriteOnce"] }, { accessModes: ["ReadWriteOnce", "ReadOnlyMany"] }));
    assert.ok(!isSubset({ args: ["a", "b"] }, { args: ["b", "a"] }));
    assert.ok(!isSubset({ args: ["a"] }, { args: "a" }));
  });

  it("matches the first observed item of a key, as a list-map has one", () => {
    const observed = {
      env: [
        { name: "a", value: "1" },
        { name: "a", value: "2" },
      ],
    };
    assert.ok(isSubset({ env: [{ name: "a", value: "1" }] }, observed));
    assert.ok(!isSubset({ env: [{ name: "a", value: "2" }] }, observed));
  });

  it("reads each observed item's key a few times, however long the list (a chart's list is the tenant's)", () => {
    const size = 2_000;
    let keyReads = 0;
    const observed = Array.from({ length: size }, (_, i) => ({
      get name() {
        keyReads++;
        return `e${i}`;
      },
      value: String(i),
    }));
    const desired = Array.from({ length: size }, (_, i) => ({ name: `e${size - 1 - i}`, value: String(size - 1 - i) }));
    assert.ok(isSubset({ env: desired }, { env: observed }));
    // A few reads per item (to index it, to compare it): 4,004,000 when each desired item searched the list.
    assert.ok(keyReads <= 3 * size, `${keyReads} reads of ${size} keys`);
  });

  it("lets an empty desired list match an absent one (the apiserver drops empty lists)", () => {
    assert.ok(isSubset({ args: [] }, {}));
    assert.ok(isSubset({ args: [] }, { args: [] }));
    assert.ok(!isSubset({ args: [] }, { args: ["x"] }));
  });
});

describe("isSubset: whole children", () => {
  it("holds for a child as the apiserver returns it after our apply", () => {
    // GIVEN the desired Service and the live one with server defaults and status
    const desired = desiredService(input);
    const live = {
      ...structuredClone(desired),
      metadata: {
        ...structuredClone(desired.metadata),
        uid: "s1",
        resourceVersion: "7",
        creationTimestamp: "2030-01-01T00:00:00Z",
      },
      spec: {
        ...structuredClone(desired.spec),
        clusterIP: "10.96.0.1",
        clusterIPs: ["10.96.0.1"],
        sessionAffinity: "None",
        ports: [{ name: "app", port: 8080, targetPort: 8080, protocol: "TCP" }],
      },
      status: { loadBalancer: {} },
    };

    // THEN no apply is needed
    assert.ok(isSubset(desired, live));

    // AND a changed port is seen
    live.spec.ports[0]!.targetPort = 9090;
    assert.ok(!isSubset(desired, live));
  });

  it("sees a grown storage request in a StatefulSet", () => {
    const live = structuredClone(desiredStatefulSet(input)) as unknown;
    assert.ok(isSubset(desiredStatefulSet(input), live));
    assert.ok(!isSubset(desiredStatefulSet({ ...input, spec: { ...input.spec, storage: "2Gi" } }), live));
  });
});

describe("jsonEqual", () => {
  it("ignores key order and undefined fields, not values or list order", () => {
    assert.ok(jsonEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1, d: undefined }));
    assert.ok(!jsonEqual({ a: [1, 2] }, { a: [2, 1] }));
    assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: 2 }));
  });
});
