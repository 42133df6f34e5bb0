/**
 * What the operator's cache keeps of a MyAppInstance: what reconciles read, and `spec.values` only up to the
 * platform's limit; and how large values are measured.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { finalizer, maxReconcileRequestLength, reconcileRequestAnnotation } from "../../../api/index.ts";
import { valuesBytes, valuesTooLargeMessage } from "../../../chart/index.ts";
import { instanceAsRead } from "../../../operator/instance-as-read.ts";

const metadata = {
  name: "web",
  namespace: "team-a",
  uid: "u-1",
  resourceVersion: "42",
  generation: 3,
  creationTimestamp: "2030-01-01T00:00:00Z",
  finalizers: ["example.com/finalizer"],
};

function written(spec: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: {
      ...metadata,
      labels: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`team.example/l${i}`, "x".repeat(63)])),
      annotations: {
        [reconcileRequestAnnotation]: "2030-01-01T00:00:01Z",
        "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ spec }),
        "team.example/notes": "y".repeat(200_000),
      },
      managedFields: [{ manager: "kubectl", fieldsV1: { "f:spec": {} } }],
    },
    spec,
    status: { phase: "Ready", observedGeneration: 3 },
    ...extra,
  };
}

describe("instanceAsRead", () => {
  const asRead = instanceAsRead(1);

  it("keeps identity, generation, finalizers, the reconcile request, spec and status; no labels or other annotations", () => {
    const spec = { image: "nginx:1.27", values: { a: 1 } };
    assert.deepEqual(asRead(written(spec)), {
      apiVersion: "example.com/v1",
      kind: "MyAppInstance",
      metadata: { ...metadata, annotations: { [reconcileRequestAnnotation]: "2030-01-01T00:00:01Z" } },
      spec,
      status: { phase: "Ready", observedGeneration: 3 },
    });
  });

  it("keeps a reconcile request only as long as one that is answered", () => {
    const request = (value: string) =>
      asRead({
        ...written({ image: "nginx:1.27" }),
        metadata: { ...metadata, annotations: { [reconcileRequestAnnotation]: value } },
      }).metadata.annotations;
    const longest = "r".repeat(maxReconcileRequestLength);
    assert.deepEqual(request(longest), { [reconcileRequestAnnotation]: longest });
    assert.equal(request(`${longest}r`), undefined, "never answered, so never kept");
  });

  it("keeps a deletion and leaves out what is not set", () => {
    const deleting = asRead({
      apiVersion: "example.com/v1",
      kind: "MyAppInstance",
      metadata: { name: "web", namespace: "team-a", deletionTimestamp: "2030-01-02T00:00:00Z" },
    });
    assert.deepEqual(deleting, {
      apiVersion: "example.com/v1",
      kind: "MyAppInstance",
      metadata: { name: "web", namespace: "team-a", deletionTimestamp: "2030-01-02T00:00:00Z" },
    });
  });

  it("keeps values up to the limit, byte for byte", () => {
    const values = { blob: "x".repeat(1024 - 11) };
    assert.equal(valuesBytes(values), 1024);
    assert.deepEqual(asRead(written({ image: "nginx:1.27", values })).spec, { image: "nginx:1.27", values });
  });

  it("keeps values as their JSON text: each read returns equal values of its own", () => {
    const values = { image: { tag: "1.27" }, list: [[], [1], { a: null }] };
    const spec = asRead(written({ image: "nginx:1.27", values })).spec as { values: unknown };
    assert.equal(typeof Object.getOwnPropertyDescriptor(spec, "values")?.get, "function");
    assert.deepEqual(spec.values, values);
    assert.notEqual(spec.values, spec.values);
    (spec.values as { image: { tag: string } }).image.tag = "changed";
    assert.deepEqual({ ...spec }, { image: "nginx:1.27", values });
    assert.equal(JSON.stringify(spec), JSON.stringify({ image: "nginx:1.27", values }));
  });

  it("withholds values over the limit, keeping the rest of the spec and saying how large they were", () => {
    const values = { blob: "x".repeat(1025 - 11) };
    const cached = asRead(written({ image: "nginx:1.27", replicas: 2, chart: { configMap: "app" }, values }));
    assert.deepEqual(cached.spec, { image: "nginx:1.27", replicas: 2, chart: { configMap: "app" } });
    assert.deepEqual(cached.valuesWithheld, { bytes: 1025, limitKiB: 1 });
    assert.deepEqual(cached.status, { phase: "Ready", observedGeneration: 3 });
    // What it costs the cache: well under the 300 KiB written.
    assert.ok(JSON.stringify(cached).length < 1024, JSON.stringify(cached));
  });

  it("measures values nested past the stack without recursing", () => {
    const depth = 9000;
    const values = JSON.parse('{"a":'.repeat(depth) + "1" + "}".repeat(depth));
    assert.equal(valuesBytes(values), 6 * depth + 1);
    const instance = {
      apiVersion: "example.com/v1",
      kind: "MyAppInstance",
      metadata,
      spec: { image: "nginx", values },
    };
    // Kept as they are under a limit they fit (compared by identity: assert's deep equality recurses too) ...
    const kept = instanceAsRead(64)(instance).spec as { values?: unknown };
    assert.equal(kept.values, values);
    // ... withheld over one they do not.
    assert.deepEqual(asRead(instance).valuesWithheld, { bytes: 6 * depth + 1, limitKiB: 1 });
  });

  it("a field only the cache sets cannot be forged by the writer", () => {
    const forged = asRead(
      written({ image: "nginx:1.27" }, { valuesWithheld: { bytes: 1, limitKiB: 1 }, finalizersWithheld: { count: 1 } }),
    );
    assert.equal(forged.valuesWithheld, undefined);
    assert.equal(forged.finalizersWithheld, undefined);
  });

  it("keeps a finalizer list of any real use whole, and of a longer one only the operator's own", () => {
    // GIVEN a tenant's instance with 4,400 finalizers of 265 characters (1.2 MB, which the apiserver takes)
    const theirs = Array.from(
      { length: 4400 },
      (_, i) => `${"a".repeat(240)}.example.com/f${String(i).padStart(8, "0")}`,
    );
    const withFinalizers = (finalizers: string[]) =>
      asRead({ ...written({ image: "nginx:1.27" }), metadata: { ...metadata, finalizers } });
    // THEN the cache keeps the operator's own, where it is, and how many there were
    const long = withFinalizers([...theirs.slice(0, 10), finalizer, ...theirs.slice(10)]);
    assert.deepEqual(long.metadata.finalizers, [finalizer]);
    assert.deepEqual(long.finalizersWithheld, { count: 4401 });
    assert.deepEqual(withFinalizers(theirs).metadata.finalizers, []);
    assert.ok(JSON.stringify(long).length < 2048, "what is kept is small");
    // and a list as long as real ones get, whole
    const several = [finalizer, ...theirs.slice(0, 10)];
    assert.deepEqual(withFinalizers(several).metadata.finalizers, several);
    assert.equal(withFinalizers(several).finalizersWithheld, undefined);
  });
});

describe("valuesBytes", () => {
  it("counts what JSON.stringify writes, in UTF-8", () => {
    const samples = [
      {},
      { a: [1, 2, { b: null, c: 'é😀\n"<>&' }], d: true, e: -1.5e-7, f: [] },
      { x: [[], [[]], {}] },
      { ключ: "значение", "": "" },
    ];
    for (const sample of samples) {
      const expected = Buffer.byteLength(JSON.stringify(sample));
      assert.equal(valuesBytes(sample), expected);
      // Counted by hand below 9,000 levels of {"a": ...}, past JSON.stringify's stack: the same figure.
      let deep: unknown = sample;
      for (let i = 0; i < 9000; i++) deep = { a: deep };
      assert.equal(valuesBytes(deep), 6 * 9000 + expected);
    }
  });

  it("counts compact JSON in UTF-8, and nothing for no values", () => {
    assert.equal(valuesBytes(undefined), 0);
    assert.equal(valuesBytes({}), 2);
    assert.equal(valuesBytes({ a: [1, 2] }), 11);
    // é is two bytes, 😀 four
    assert.equal(valuesBytes({ t: "é😀" }), 8 + 2 + 4);
  });

  it("words the refusal with the size to a tenth of a KiB, never rounded down to the limit", () => {
    assert.equal(
      valuesTooLargeMessage(204_800, 128),
      "is 200 KiB as JSON; the platform allows at most 128 KiB (--render-values)",
    );
    assert.match(valuesTooLargeMessage(131_073, 128), /^is 128\.1 KiB as JSON/);
  });
});
