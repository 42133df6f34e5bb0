/**
 * No takeover by a chart, against the recording FakeCluster: a write-only Secret is created with POST and, when
 * its name is taken, applied only after a JSON-patch `test` proved the instance controls it (the operator cannot
 * read Secrets); a namesake of someone else's, or another instance's, is refused and left untouched; readable
 * kinds of another instance are refused too; and policy refusals come before any write.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ChartRenderer } from "../../../chart/index.ts";
import { PermanentError } from "../../../operator/reconcile/index.ts";
import { kind, renderableChartKinds } from "../../../api/index.ts";
import { harness } from "../reconcile/setup.ts";

const secret = (name: string, value: string) => `---
# Source: app/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: ${name}
stringData:
  password: ${value}
`;
const configMap = (name: string) => `---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
data:
  a: "1"
`;

function setup(render: () => string) {
  const h = harness();
  const renderer: ChartRenderer = { render: async () => ({ manifest: render(), hooks: [], crds: [] }) };
  const chart = {
    renderer,
    fetchChart: async () => new Uint8Array([1]),
    // Secrets and ConfigMaps are opt-in kinds.
    allowedKinds: renderableChartKinds,
    appliedWriteOnly: new Map<string, ReadonlyMap<string, string>>(),
  };
  Object.assign(h.deps, { chart });
  return { h, chart };
}

/** The writes to the chart's objects (not the instance's finalizer and status). */
const childWrites = (h: ReturnType<typeof harness>) =>
  h.cluster.writeLines().filter((line) => !line.includes(`${kind}/`));

const degraded = (h: ReturnType<typeof harness>, name = "web") =>
  h.cluster.instance(name)?.status?.conditions?.find((c) => c.type === "Degraded");

describe("write-only objects (Secrets)", () => {
  test("a new Secret is created with POST, never applied over anything", async () => {
    const { h } = setup(() => secret("web-db", "s3cret"));
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await h.run();
    assert.deepEqual(childWrites(h), ["create Secret/web-db"]);
    const uid = h.cluster.instance("web")?.metadata.uid;
    assert.equal(h.cluster.get("v1", "Secret", "web-db")?.metadata.ownerReferences?.[0]?.uid, uid);
  });

  test("an existing Secret the instance does not control is refused and survives untouched", async () => {
    // GIVEN a Secret of someone else's with the name the chart renders
    const { h } = setup(() => secret("db", "attacker"));
    h.cluster.put({ apiVersion: "v1", kind: "Secret", metadata: { name: "db", namespace: "default" } });
    h.cluster.edit("v1", "Secret", "db", (object) => (object["stringData"] = { password: "victim" }));
    const before = h.cluster.get("v1", "Secret", "db");
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });

    // WHEN reconciled
    await assert.rejects(h.run(), PermanentError);

    // THEN Degraded, naming the Secret, and the Secret is as it was: no apply was sent
    assert.equal(degraded(h)?.reason, "ChildOwnedElsewhere");
    assert.match(
      degraded(h)?.message ?? "",
      /^Secret\/db already exists in default and is not controlled by this instance/,
    );
    assert.deepEqual(childWrites(h), ["create Secret/db", "jsonPatch Secret/db"]);
    assert.deepEqual(h.cluster.get("v1", "Secret", "db"), before);
  });

  test("two instances rendering one Secret: the second is refused, the first keeps it, no flapping", async () => {
    const { h, chart } = setup(() => secret("shared", "x"));
    h.cluster.createInstance("first", { image: "nginx:1.27", chart: { configMap: "c" } });
    h.cluster.createInstance("second", { image: "nginx:1.27", chart: { configMap: "c" } });
    await h.run("first");
    const firstUid = h.cluster.instance("first")?.metadata.uid;
    await assert.rejects(h.run("second"), PermanentError);
    assert.equal(degraded(h, "second")?.reason, "ChildOwnedElsewhere");

    // WHEN both reconcile again after an operator restart (nothing remembered)
    chart.appliedWriteOnly.clear();
    h.cluster.reset();
    await h.run("first");
    await assert.rejects(h.run("second"), PermanentError);
    // THEN the first re-applies its own Secret after proving ownership; the second still writes nothing to it
    assert.deepEqual(childWrites(h), [
      "create Secret/shared",
      "jsonPatch Secret/shared",
      "apply Secret/shared",
      "create Secret/shared",
      "jsonPatch Secret/shared",
    ]);
    assert.equal(h.cluster.get("v1", "Secret", "shared")?.metadata.ownerReferences?.[0]?.uid, firstUid);
    assert.notEqual(degraded(h, "first")?.status, "True");
  });

  test("the instance's own Secret is applied with the resourceVersion its ownership test saw", async () => {
    let value = "one";
    const { h, chart } = setup(() => secret("web-db", value));
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await h.run();
    value = "two";
    chart.appliedWriteOnly.clear();
    h.cluster.reset();
    await h.run();
    const apply = h.cluster.allWrites().find((request) => request.verb === "apply");
    const rv = (apply?.body as { metadata: { resourceVersion?: string } }).metadata.resourceVersion;
    assert.ok(rv, "the apply carries a resourceVersion precondition");
    assert.deepEqual(h.cluster.get("v1", "Secret", "web-db")?.["stringData"], { password: "two" });
  });
});

describe("what is remembered of write-only objects", () => {
  test("follows the current render, costs no write when converged, and goes with the instance", async () => {
    // GIVEN an instance whose render names its Secret after a value the tenant changes
    let name = "web-a";
    const { h, chart } = setup(() => secret(name, "x"));
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await h.run();
    assert.deepEqual(
      [...(chart.appliedWriteOnly.get("default/web") ?? [])].map(([key]) => key),
      ["Secret/web-a"],
    );
    // WHEN it is reconciled again unchanged THEN nothing is written
    h.cluster.reset();
    await h.run();
    assert.deepEqual(childWrites(h), []);
    // WHEN the render names another Secret THEN only the current one is remembered
    name = "web-b";
    await h.run();
    assert.deepEqual(
      [...(chart.appliedWriteOnly.get("default/web") ?? [])].map(([key]) => key),
      ["Secret/web-b"],
    );
    // WHEN the instance is deleted THEN nothing of it is remembered
    h.cluster.deleteInstance("web");
    await h.run();
    await h.run();
    assert.equal(chart.appliedWriteOnly.has("default/web"), false);
  });
});

describe("readable objects", () => {
  test("another instance's ConfigMap is refused, not taken over", async () => {
    const { h } = setup(() => configMap("shared"));
    h.cluster.createInstance("first", { image: "nginx:1.27", chart: { configMap: "c" } });
    h.cluster.createInstance("second", { image: "nginx:1.27", chart: { configMap: "c" } });
    await h.run("first");
    const firstUid = h.cluster.instance("first")?.metadata.uid;
    h.cluster.reset();
    await assert.rejects(h.run("second"), PermanentError);
    assert.equal(degraded(h, "second")?.reason, "ChildOwnedElsewhere");
    assert.deepEqual(childWrites(h), []);
    assert.equal(h.cluster.get("v1", "ConfigMap", "shared")?.metadata.ownerReferences?.[0]?.uid, firstUid);
  });

  test("an object without a controller is refused too, even with the operator's label, as the built-in template does", async () => {
    // GIVEN a ConfigMap nobody controls that carries the operator's label (anyone who may create it may label it so)
    const { h } = setup(() => configMap("settings"));
    const before = h.cluster.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "settings",
        namespace: "default",
        labels: { "app.kubernetes.io/managed-by": "myapp-operator" },
      },
      data: { a: "platform" },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    // WHEN a chart renders its name THEN it is refused, named, and left as it was
    await assert.rejects(h.run(), PermanentError);
    assert.equal(degraded(h)?.reason, "ChildOwnedElsewhere");
    assert.match(
      degraded(h)?.message ?? "",
      /^ConfigMap\/settings already exists in default and is not the instance's/,
    );
    assert.deepEqual(childWrites(h), []);
    assert.deepEqual(h.cluster.get("v1", "ConfigMap", "settings"), before);
  });
});

describe("policy", () => {
  test("a refused render writes nothing but the status", async () => {
    const { h } = setup(
      () =>
        secret("web-db", "x") +
        `---
# Source: app/templates/svc.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  externalIPs: [1.2.3.4]
  ports: [{ port: 80 }]
`,
    );
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await assert.rejects(h.run(), PermanentError);
    assert.equal(degraded(h)?.reason, "ChartServiceExternalIPs");
    assert.deepEqual(childWrites(h), []);
    assert.equal(h.cluster.get("v1", "Secret", "web-db"), undefined);
  });
});
