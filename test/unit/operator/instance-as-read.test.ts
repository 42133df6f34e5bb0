/**
 * What the operator's cache keeps of a MyAppInstance: what reconciles read, `spec.values` only up to the
 * platform's limit, of the status only the operator's own conditions and messages as long as it writes them; and
 * how large values are measured.
 */
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, it } from "node:test";
import {
  conditionTypes,
  finalizer,
  maxConditions,
  maxConditionTimeLength,
  maxReconcileRequestLength,
  maxStatusMessageLength,
  reconcileRequestAnnotation,
  validateStatus,
  type Condition,
} from "../../../api/index.ts";
import { valuesBytes, valuesTooLargeMessage } from "../../../chart/index.ts";
import { ServerError, type KubeObject } from "../../../kube/index.ts";
import {
  cutMessageNote,
  instanceAsRead,
  keptConditionTypes,
  maxKeptMessageLength,
} from "../../../operator/instance-as-read.ts";
import { TransientError } from "../../../operator/reconcile/index.ts";
import { clippedMessage, statusMessageLength } from "../../../operator/reconcile/status-limits.ts";
import { harness } from "../reconcile/setup.ts";

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

/** A condition as a status writer other than the operator might set it. */
function foreign(type: string, message: string, status: Condition["status"] = "True"): Condition {
  return { type, status, lastTransitionTime: "2026-01-01T00:00:00Z", reason: "Theirs", message };
}

/** Code points, as the apiserver's maxLength counts them. */
const characters = (text: unknown) => Array.from(String(text)).length;

/**
 * The largest status the CRD allows, as heavy as etcd takes it: 16 conditions (the operator's five types among
 * them) and status.message, each message 32,768 two-byte characters (~1.1 MB of JSON, ~1 MiB of heap).
 */
function largestStatus(seed = "ж") {
  const long = (i: number) => `${i} ${seed.repeat(maxStatusMessageLength - String(i).length - 1)}`;
  const ours = Object.values(conditionTypes);
  const conditions = Array.from({ length: maxConditions }, (_, i) =>
    foreign(i < ours.length ? ours[i]! : `Junk${i}`, long(i)),
  );
  return { conditions, observedGeneration: 3, phase: "Running", message: long(99), selector: "app=web" };
}

describe("instanceAsRead: status", () => {
  const asRead = instanceAsRead(128);
  const withStatus = (status: unknown) =>
    asRead({ apiVersion: "example.com/v1", kind: "MyAppInstance", metadata, spec: { image: "nginx:1.27" }, status });

  it("keeps a status the operator wrote as it is", () => {
    const status = {
      conditions: [
        foreign("Ready", "2/2 replicas ready, running nginx:1.27"),
        foreign("Progressing", "nginx:1.27 is rolled out", "False"),
        foreign("Degraded", "", "False"),
        foreign("Stalled", clippedMessage("x".repeat(40_000))),
      ],
      observedGeneration: 3,
      replicas: 2,
      readyReplicas: 2,
      phase: "Running",
      image: "nginx:1.27",
      message: clippedMessage("🚀".repeat(40_000)),
      endpoint: "web.team-a.svc:8080",
      selector: "app.kubernetes.io/instance=web",
      chartUsage: { replicas: 4, storage: "2Gi" },
      lastHandledReconcileAt: "2030-01-01T00:00:01Z",
    };
    assert.ok(validateStatus(status).ok);
    assert.deepEqual(withStatus(status).status, status);
  });

  it("keeps every message the operator writes: its own are cut shorter", () => {
    assert.ok(maxKeptMessageLength >= statusMessageLength);
    assert.ok(cutMessageNote.length < maxKeptMessageLength);
  });

  it("keeps only the operator's condition types, in their order", () => {
    assert.deepEqual([...keptConditionTypes].sort(), ["Degraded", "Progressing", "Ready", "Reconciling", "Stalled"]);
    const conditions = [
      foreign("Junk0", "theirs"),
      foreign("Ready", "ours"),
      foreign("example.com/Ready", "theirs"),
      foreign("Stalled", "ours"),
      foreign("ready", "theirs"),
    ];
    const kept = withStatus({ conditions, phase: "Running" }).status as { conditions: Condition[] };
    assert.deepEqual(
      kept.conditions.map((c) => c.type),
      ["Ready", "Stalled"],
    );
    assert.deepEqual(withStatus({ conditions: [foreign("Junk0", "theirs")] }).status, { conditions: [] });
  });

  it("cuts a longer message to the limit with a note, and keeps what it cut as it is", () => {
    for (const text of ["m".repeat(32_000), "ж".repeat(maxStatusMessageLength), "🚀".repeat(maxStatusMessageLength)]) {
      const status = withStatus({ conditions: [foreign("Ready", text)], message: text }).status as {
        conditions: Condition[];
        message: string;
      };
      const [ready] = status.conditions;
      for (const cut of [ready?.message, status.message]) {
        assert.equal(characters(cut), maxKeptMessageLength);
        assert.ok(cut?.endsWith(cutMessageNote), cut?.slice(-80));
        assert.ok(text.startsWith(cut!.slice(0, -cutMessageNote.length)));
        // not what the operator would write for the same text, so a write puts its own view back
        assert.notEqual(cut, clippedMessage(text));
      }
      assert.ok(validateStatus(status).ok, "still a valid status");
      // Read again (once the operator wrote it back), it is kept as it is: the cut does not grow or change.
      assert.deepEqual(withStatus(status).status, status);
    }
  });

  it("leaves out a condition whose time is longer than the schema allows (stored before it said so)", () => {
    const time = `2026-01-01T00:00:00Zt${"x".repeat(maxConditionTimeLength)}`;
    const stored = {
      conditions: [{ ...foreign("Ready", "theirs"), lastTransitionTime: time }, foreign("Degraded", "")],
    };
    assert.deepEqual(
      (withStatus(stored).status as { conditions: Condition[] }).conditions.map((c) => c.type),
      ["Degraded"],
    );
  });

  it("keeps no status that is not an object, and no conditions that are not a list of objects", () => {
    assert.equal(withStatus("x".repeat(1000)).status, undefined);
    assert.equal(withStatus(["Ready"]).status, undefined);
    assert.equal(withStatus(null).status, undefined);
    assert.deepEqual(withStatus({ conditions: "Ready" }).status, { conditions: [] });
    assert.deepEqual(withStatus({ conditions: [null, "Ready", 1, foreign("Ready", "ok")] }).status, {
      conditions: [foreign("Ready", "ok")],
    });
  });

  it("keeps a few KiB of the largest status the CRD allows, also with values withheld", () => {
    const status = largestStatus();
    assert.ok(validateStatus(status).ok, "the CRD allows it");
    const written = JSON.stringify(status);
    assert.ok(Buffer.byteLength(written) > 1_000_000, String(Buffer.byteLength(written)));
    for (const cache of [asRead, instanceAsRead(0)]) {
      const cached = cache({
        apiVersion: "example.com/v1",
        kind: "MyAppInstance",
        metadata,
        spec: { image: "nginx:1.27", values: { a: 1 } },
        status,
      });
      const kept = cached.status as { conditions: Condition[] };
      assert.deepEqual(
        kept.conditions.map((c) => c.type),
        ["Ready", "Progressing", "Degraded", "Reconciling", "Stalled"],
      );
      // 6 messages of 4,096 two-byte characters at most
      assert.ok(Buffer.byteLength(JSON.stringify(cached)) < 6 * 2 * maxKeptMessageLength + 2048);
    }
  });

  it("holds in its heap only what it keeps, not the message it cut", () => {
    // A slice of a string keeps the whole string alive in V8: what the cache keeps must be a copy.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    // GIVEN 40 statuses of ~1 MiB each, fresh strings as JSON.parse makes them (a repeat would share one)
    const kept = Array.from({ length: 40 }, (_, i) => withStatus(JSON.parse(JSON.stringify(largestStatus(`${i}ж`)))));
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // THEN the cache holds ~50 KiB of each, not 1 MiB
    assert.ok(grown < 10 * 1024 * 1024, `the cache grew by ${Math.round(grown / 1024)} KiB`);
    assert.equal(kept.length, 40);
  });
});

describe("reconcile: a status written by someone else, as the cache keeps it", () => {
  /** An instance the operator created, rolled out and reported Running, read through the cache. */
  async function running() {
    const h = harness();
    h.cluster.cacheKeeps = (object) => (object.kind === "MyAppInstance" ? instanceAsRead(128)(object) : object);
    h.cluster.createInstance("web", { image: "nginx:1.27", replicas: 2, port: 8080 });
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    assert.equal(h.cluster.instance("web")?.status?.phase, "Running", "precondition: the instance runs");
    h.cluster.reset();
    return h;
  }
  const statusOf = (h: ReturnType<typeof harness>) =>
    h.cluster.instance("web")?.status as { conditions: Condition[]; message: string };
  /** What the writer sets through the status subresource. */
  const write = (
    h: ReturnType<typeof harness>,
    change: (status: { conditions: Condition[]; message: string }) => void,
  ) => h.cluster.edit("example.com/v1", "MyAppInstance", "web", (o: KubeObject) => change(o["status"] as never));
  /** Server-side apply leaves the conditions another manager set: put them back after the operator's write. */
  const keepTheirs = (h: ReturnType<typeof harness>, theirs: Condition[]) =>
    write(h, (status) => {
      status.conditions = [...status.conditions.filter((c) => !theirs.some((t) => t.type === c.type)), ...theirs];
    });

  it("writes nothing for conditions of other types, however long", async () => {
    // GIVEN the operator's Running status, and 11 conditions of other types with 32,768-character messages
    const h = await running();
    const theirs = Array.from({ length: maxConditions - 5 }, (_, i) =>
      foreign(`Junk${i}`, "m".repeat(maxStatusMessageLength)),
    );
    keepTheirs(h, theirs);
    h.cluster.reset();
    // WHEN reconciled THEN no status write: the operator's own conditions are as it wrote them
    await h.run();
    assert.deepEqual(h.cluster.writeLines(), []);
    assert.equal(statusOf(h).conditions.length, 3 + theirs.length);
  });

  it("puts its own view back once over a long foreign message of its own types, then writes no more", async () => {
    // GIVEN a writer that set Ready's and the status's message to 32,768 characters, beside conditions of its own
    const h = await running();
    const ours = statusOf(h);
    const theirs = [foreign("Junk0", "m".repeat(maxStatusMessageLength))];
    keepTheirs(h, theirs);
    write(h, (status) => {
      status.message = "x".repeat(maxStatusMessageLength);
      status.conditions = status.conditions.map((c) =>
        c.type === "Ready" ? { ...c, message: "y".repeat(maxStatusMessageLength) } : c,
      );
    });
    h.cluster.reset();

    // WHEN reconciled THEN one status write puts the operator's messages back
    await h.run();
    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"]);
    keepTheirs(h, theirs);
    const after = statusOf(h);
    assert.equal(after.message, ours.message);
    assert.deepEqual(
      after.conditions.filter((c) => keptConditionTypes.has(c.type)),
      ours.conditions,
    );

    // and WHEN reconciled again THEN nothing more is written
    h.cluster.reset();
    await h.run();
    await h.run();
    assert.deepEqual(h.cluster.writeLines(), []);
  });

  it("keeps a cut message it writes back while stalled, and writes it no more", async () => {
    // GIVEN a long foreign Ready message, and the operator failing for a transient cause (Stalled only)
    const h = await running();
    write(h, (status) => {
      status.conditions = status.conditions.map((c) =>
        c.type === "Ready" ? { ...c, message: "y".repeat(maxStatusMessageLength) } : c,
      );
    });
    h.cluster.reset();
    const transient = new TransientError(
      "reconcile default/web: the server is currently unable to handle the request",
      {
        cause: new ServerError(503, "the server is currently unable to handle the request"),
      },
    );
    await h.stalled(transient);
    await h.stalled(transient);
    // THEN one write: Stalled, and Ready as the cache keeps it (its message cut, within the schema)
    assert.deepEqual(h.cluster.writeLines(), ["applyStatus MyAppInstance/web"]);
    const status = statusOf(h);
    assert.equal(status.conditions.find((c) => c.type === "Stalled")?.status, "True");
    const ready = status.conditions.find((c) => c.type === "Ready");
    assert.equal(characters(ready?.message), maxKeptMessageLength);
    assert.ok(ready?.message.endsWith(cutMessageNote));
    assert.ok(validateStatus(status).ok);
    // and WHEN it fails again THEN nothing more is written
    h.cluster.reset();
    await h.stalled(transient);
    assert.deepEqual(h.cluster.writeLines(), []);
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
