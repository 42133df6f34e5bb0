import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeClient, KubeObject } from "../../../kube/index.ts";
import {
  boundedLiveList,
  eventMessageChars,
  keptOfListed,
  liveListBudgetChars,
  LiveListTooLarge,
  maxEventItemChars,
} from "../../../operator/reconcile/live-lists.ts";

/** A listEach over `items`, as kube/client.ts calls `each`: with each item's length as JSON. */
function lister(items: readonly KubeObject[]): Pick<KubeClient, "listEach"> & { limits: unknown[] } {
  const limits: unknown[] = [];
  return {
    limits,
    listEach: (async (
      _apiVersion: string,
      _kind: string,
      _options: unknown,
      each: (item: KubeObject, length: number) => unknown,
      given: unknown = {},
    ) => {
      limits.push(given);
      return { metadata: {}, items: items.map((item) => each(item, JSON.stringify(item).length)), oversized: 0 };
    }) as KubeClient["listEach"],
  };
}

const selectorValues = Array.from({ length: 2_000 }, (_, i) => `value-${i}`);

function claim(name: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name,
      namespace: "team",
      uid: `uid-${name}`,
      resourceVersion: "7",
      labels: { app: "db" },
      annotations: { big: "y".repeat(100_000) },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "sts", controller: true }],
      managedFields: [{ manager: "kubectl" }],
    },
    spec: {
      storageClassName: "fast",
      resources: { requests: { storage: "1Gi" } },
      selector: { matchExpressions: [{ key: "k", operator: "In", values: selectorValues }] },
    },
    status: { phase: "Bound", capacity: { storage: "1Gi" } },
  } as KubeObject;
}

test("a listed claim is kept in what the reconcile reads: no selector, annotations or managed fields", () => {
  const kept = keptOfListed(claim("data-db-0")) as KubeObject & { spec: Record<string, unknown>; status: unknown };
  assert.deepEqual(JSON.parse(JSON.stringify(kept)), {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: "data-db-0",
      namespace: "team",
      uid: "uid-data-db-0",
      resourceVersion: "7",
      labels: { app: "db" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "sts", controller: true }],
    },
    spec: { storageClassName: "fast", resources: { requests: { storage: "1Gi" } } },
    status: { phase: "Bound", capacity: { storage: "1Gi" }, conditions: [] },
  });
});

test("a listed Event keeps its reason, times (its creation's too) and the first 4 KiB of its message", () => {
  const event = {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "db.1", namespace: "team", annotations: { a: "b" }, creationTimestamp: "2026-12-07T09:59:00Z" },
    reason: "FailedCreate",
    message: "m".repeat(5_000),
    lastTimestamp: "2026-12-07T10:00:00Z",
    involvedObject: { kind: "StatefulSet", name: "db" },
  } as KubeObject;
  const kept = keptOfListed(event) as KubeObject & { message: string; reason: string };
  assert.equal(kept.message.length, eventMessageChars);
  assert.equal(kept.reason, "FailedCreate");
  assert.equal(kept.metadata.annotations, undefined);
  // An Event with no other time sorts by its creation (operator/reconcile/rollout.ts)
  assert.equal(kept.metadata.creationTimestamp, "2026-12-07T09:59:00Z");
});

test("a live list is held to its budget, naming the kind and namespace; Events past a line are left unparsed", async () => {
  // 1,000 claims of ~100 KiB annotations each: kept small, well within the budget
  const claims = Array.from({ length: 1_000 }, (_, i) => claim(`c-${i}`));
  const listed = await boundedLiveList(lister(claims), "v1", "PersistentVolumeClaim", {
    namespace: "team",
    labelSelector: "",
    fieldSelector: "metadata.namespace=team",
  });
  assert.equal(listed.length, 1_000);
  // Kinds kept whole count whole: StatefulSets past the budget fail the read, naming what to do
  const bulky = Array.from({ length: Math.ceil(liveListBudgetChars / 1_000_000) + 1 }, (_, i) => ({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: `s-${i}`, annotations: { a: "z".repeat(1_000_000) } },
  }));
  await assert.rejects(
    boundedLiveList(lister(bulky), "apps/v1", "StatefulSet", { namespace: "team", labelSelector: "" }),
    (error: unknown) =>
      error instanceof LiveListTooLarge &&
      /StatefulSet objects of namespace team take more than 16 MiB/.test(error.message),
  );
  const events = lister([]);
  await boundedLiveList(events, "v1", "Event", { namespace: "team", labelSelector: "", fieldSelector: "x=y" });
  assert.deepEqual(events.limits, [{ maxItemChars: maxEventItemChars }]);
});
