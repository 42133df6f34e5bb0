import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pino } from "pino";
import { ServerError, type KubeClient } from "../../../kube/index.ts";
import { eventObject, fieldManager, kubePort, type EventRecord } from "../../../operator/reconcile/index.ts";

/** A KubeClient stand-in that records the calls kubePort makes. */
function recordingClient(options: { failCreate?: Error } = {}) {
  const calls: { method: string; args: unknown[] }[] = [];
  const record =
    (method: string, result: unknown = {}) =>
    async (...args: unknown[]) => {
      calls.push({ method, args });
      return result;
    };
  const client = {
    find: record("find", undefined),
    list: record("list", { metadata: {}, items: [{ kind: "PersistentVolumeClaim" }] }),
    apply: record("apply"),
    mergePatch: record("mergePatch"),
    delete: record("delete", true),
    async create(...args: unknown[]) {
      calls.push({ method: "create", args });
      if (options.failCreate) throw options.failCreate;
      return {};
    },
  };
  return { client: client as unknown as KubeClient, calls };
}

const event: EventRecord = {
  type: "Normal",
  reason: "Created",
  action: "Apply",
  note: "Created Deployment web",
  regarding: { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "web", namespace: "shop", uid: "u1" },
};

describe("kubePort", () => {
  const logger = pino({ level: "silent" });

  it("applies with the operator's field manager, forcing ownership", async () => {
    const { client, calls } = recordingClient();
    const port = kubePort(client, { reportingInstance: "pod-1", logger });
    const object = { apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "shop" } };

    await port.apply(object);

    assert.equal(fieldManager, "myapp-operator");
    assert.deepEqual(calls, [{ method: "apply", args: [object, { fieldManager: "myapp-operator", force: true }] }]);
  });

  it("applies status to the status subresource with only name and namespace", async () => {
    const { client, calls } = recordingClient();
    const port = kubePort(client, { reportingInstance: "pod-1", logger });

    await port.applyStatus({ namespace: "shop", name: "web" }, { phase: "Running" });

    assert.deepEqual(calls[0]?.args, [
      {
        apiVersion: "example.com/v1",
        kind: "MyAppInstance",
        metadata: { name: "web", namespace: "shop" },
        status: { phase: "Running" },
      },
      { fieldManager: "myapp-operator", force: true, subresource: "status" },
    ]);
  });

  it("sets finalizers with a merge patch that carries the resourceVersion (409 when it moved on)", async () => {
    const { client, calls } = recordingClient();
    const port = kubePort(client, { reportingInstance: "pod-1", logger });

    await port.setFinalizers({ namespace: "shop", name: "web", resourceVersion: "42" }, ["a", "b"]);

    assert.deepEqual(calls[0], {
      method: "mergePatch",
      args: [
        "example.com/v1",
        "MyAppInstance",
        "web",
        "shop",
        { metadata: { resourceVersion: "42", finalizers: ["a", "b"] } },
      ],
    });
  });

  it("passes propagation policy and uid precondition on delete; lists by label selector", async () => {
    const { client, calls } = recordingClient();
    const port = kubePort(client, { reportingInstance: "pod-1", logger });

    assert.equal(
      await port.delete("apps/v1", "StatefulSet", "web", "shop", {
        propagationPolicy: "Orphan",
        preconditionUid: "u9",
      }),
      true,
    );
    const items = await port.list("v1", "PersistentVolumeClaim", "shop", "a=b");

    assert.deepEqual(calls[0]?.args, [
      "apps/v1",
      "StatefulSet",
      "web",
      "shop",
      { propagationPolicy: "Orphan", preconditionUid: "u9" },
    ]);
    assert.deepEqual(calls[1]?.args, ["v1", "PersistentVolumeClaim", { namespace: "shop", labelSelector: "a=b" }]);
    assert.equal(items.length, 1);
  });

  it("creates events.k8s.io events, and only logs when that fails", async () => {
    const { client, calls } = recordingClient({ failCreate: new ServerError(500, "boom") });
    const port = kubePort(client, {
      reportingInstance: "pod-1",
      logger,
      now: () => new Date("2030-01-01T00:00:00.123Z"),
    });

    await port.emitEvent(event);

    const created = calls[0]?.args[0] as Record<string, unknown>;
    assert.equal(created["apiVersion"], "events.k8s.io/v1");
    assert.equal(created["eventTime"], "2030-01-01T00:00:00.123000Z");
  });
});

describe("eventObject", () => {
  it("fills what events.k8s.io/v1 requires", () => {
    const object = eventObject(
      { ...event, related: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "shop" } },
      "pod-1",
      new Date("2030-01-01T00:00:00Z"),
    );
    assert.match(object.metadata.name ?? "", /^web\.[0-9a-f]{16}$/);
    assert.deepEqual(
      { ...object, metadata: { namespace: object.metadata.namespace } },
      {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { namespace: "shop" },
        eventTime: "2030-01-01T00:00:00.000000Z",
        reportingController: "example.com/myapp-operator",
        reportingInstance: "pod-1",
        action: "Apply",
        reason: "Created",
        note: "Created Deployment web",
        type: "Normal",
        regarding: event.regarding,
        related: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "shop" },
      },
    );
  });

  it("caps the note at 1 kB and the name at a valid length", () => {
    const long = eventObject(
      { ...event, note: "é".repeat(2000), regarding: { ...event.regarding, name: "n".repeat(253) } },
      "pod",
      new Date(),
    );
    assert.ok(Buffer.byteLength(long["note"] as string) <= 1024);
    assert.ok((long.metadata.name ?? "").length <= 253);
  });
});
