import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeClient, KubeObject, ListOptions } from "../../../kube/index.ts";
import {
  boundedLiveList,
  eventMessageChars,
  keptOfListed,
  liveListBudgetChars,
  liveListPageSize,
  liveListReadBudgetChars,
  LiveListTooLarge,
  maxEventItemChars,
} from "../../../operator/reconcile/live-lists.ts";

/**
 * A listEach over `items` as kube/client.ts reads them: a page of `limit` at a time (the continue token is the
 * offset), each item's length told to `onItemText` first, one longer than `maxItemChars` skipped unparsed, `each`
 * called with the length of the others. Records the options and limits of each call.
 */
function lister(items: readonly KubeObject[]): Pick<KubeClient, "listEach"> & {
  limits: unknown[];
  options: ListOptions[];
} {
  const limits: unknown[] = [];
  const options: ListOptions[] = [];
  return {
    limits,
    options,
    listEach: (async (
      _apiVersion: string,
      _kind: string,
      given: ListOptions,
      each: (item: KubeObject, length: number) => unknown,
      itemLimits: { maxItemChars?: number; onItemText?: (length: number) => void } = {},
    ) => {
      options.push(given);
      limits.push(itemLimits);
      const from = Number(given.continue ?? 0);
      const to = given.limit ? from + given.limit : items.length;
      const kept: unknown[] = [];
      let oversized = 0;
      for (const item of items.slice(from, to)) {
        const length = JSON.stringify(item).length;
        itemLimits.onItemText?.(length);
        if (length > (itemLimits.maxItemChars ?? Infinity)) oversized++;
        else kept.push(each(item, length));
      }
      return { metadata: to < items.length ? { continue: String(to) } : {}, items: kept, oversized };
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
  // 400 claims of ~120 KiB each (annotations, a selector): kept small, well within the budget, read a page at a time
  const claims = Array.from({ length: 400 }, (_, i) => claim(`c-${i}`));
  const lister400 = lister(claims);
  const listed = await boundedLiveList(lister400, "v1", "PersistentVolumeClaim", {
    namespace: "team",
    labelSelector: "",
    fieldSelector: "metadata.namespace=team",
  });
  assert.equal(listed.length, 400);
  assert.deepEqual(
    lister400.options.map((options) => [options.limit, options.continue]),
    Array.from({ length: 400 / liveListPageSize }, (_, page) => [
      liveListPageSize,
      page === 0 ? undefined : String(page * liveListPageSize),
    ]),
  );
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
      /StatefulSet objects of namespace team this instance reads take more than 16 MiB/.test(error.message),
  );
  const events = lister([]);
  await boundedLiveList(events, "v1", "Event", { namespace: "team", labelSelector: "", fieldSelector: "x=y" });
  assert.equal((events.limits[0] as { maxItemChars?: number }).maxItemChars, maxEventItemChars);
});

test("a live list stops at what it may read, skipped items included: a tenant's megabyte Events cost 1 MiB", async () => {
  // 300 forged Events of 1 MB about one StatefulSet: each skipped unparsed, and before, each list read all 300 MB
  const forged = Array.from({ length: 300 }, (_, i) => ({
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `fake-${i}`, namespace: "team" },
    reason: "FailedCreate",
    message: "x".repeat(1_000_000),
    involvedObject: { kind: "StatefulSet", name: "db", uid: "sts" },
  }));
  const events = lister(forged);
  await assert.rejects(
    boundedLiveList(events, "v1", "Event", {
      namespace: "team",
      labelSelector: "",
      fieldSelector: "involvedObject.uid=sts",
    }),
    (error: unknown) =>
      error instanceof LiveListTooLarge &&
      /Event objects of namespace team this instance reads take more than 1 MiB to read \(2 read before it stopped\)/.test(
        error.message,
      ),
  );
  assert.equal(liveListReadBudgetChars("Event"), 1024 * 1024);
  assert.equal(events.options.length, 1, "stopped within the first page");
  // Claims (and other kinds) may read four times what they may keep
  assert.equal(liveListReadBudgetChars("PersistentVolumeClaim"), 4 * liveListBudgetChars);
});
