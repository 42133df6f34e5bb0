import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../kube/index.ts";
import { ForbiddenError, NotFoundError, ServerError } from "../../../kube/errors.ts";
import { eventObject, EventRecorder, type EventRecord } from "../../../operator/runtime/event-recorder.ts";
import { captureLogger } from "./capture-logger.ts";
import { FakeClock } from "./fake-clock.ts";

const event: EventRecord = {
  type: "Normal",
  reason: "Updated",
  action: "Apply",
  note: "Updated Deployment web to match the spec",
  regarding: { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "web", namespace: "shop", uid: "u1" },
};

function setup(options: { failCreate?: Error; failPatch?: Error; burst?: number } = {}) {
  const clock = new FakeClock();
  const { logger, lines } = captureLogger();
  const created: KubeObject[] = [];
  const patched: { name: string; patch: unknown }[] = [];
  const recorder = new EventRecorder({
    sink: {
      create: async (object) => {
        if (options.failCreate) throw options.failCreate;
        created.push(object);
        return object;
      },
      mergePatch: async (_apiVersion, _kind, name, _namespace, patch) => {
        if (options.failPatch) throw options.failPatch;
        return patched.push({ name, patch });
      },
    },
    reportingController: "example.com/myapp-operator",
    reportingInstance: "pod-1",
    logger,
    clock,
    ...(options.burst ? { burst: options.burst } : {}),
  });
  return { clock, recorder, created, patched, lines };
}

describe("EventRecorder", () => {
  it("writes an event once; repeats within the window become one series patch", async () => {
    const { clock, recorder, created, patched } = setup();
    recorder.record(event);
    recorder.record(event);
    recorder.record(event);
    await recorder.flush();
    assert.equal(created.length, 1);
    assert.equal(patched.length, 1);
    assert.equal(patched[0]?.name, created[0]?.metadata.name);
    assert.deepEqual((patched[0]?.patch as { series: { count: number } }).series.count, 3);
    // a different note is a different event
    recorder.record({ ...event, note: "something else" });
    await recorder.flush();
    assert.equal(created.length, 2);
    // after the window, the same event is written anew
    await clock.advance(360_000);
    recorder.record(event);
    await recorder.flush();
    assert.equal(created.length, 3);
    recorder.stop();
  });

  it("rate-limits events per object (a burst, then one per refill period)", async () => {
    const { clock, recorder, created } = setup({ burst: 2 });
    for (let i = 0; i < 5; i++) recorder.record({ ...event, note: `n${i}` });
    await recorder.flush();
    assert.equal(created.length, 2);
    await clock.advance(300_000);
    recorder.record({ ...event, note: "later" });
    await recorder.flush();
    assert.equal(created.length, 3);
    // a new object of the same name (another uid) is told of from its first event
    recorder.record({ ...event, note: "namesake", regarding: { ...event.regarding, uid: "u2" } });
    await recorder.flush();
    assert.equal(created.length, 4);
    recorder.stop();
  });

  it("forgets each series once its own window has passed, the younger ones kept", async () => {
    const { clock, recorder, created } = setup();
    recorder.record(event);
    await clock.advance(200_000);
    recorder.record({ ...event, note: "younger" });
    await clock.advance(200_000);
    recorder.record(event); // 400 s after the first: a new Event
    recorder.record({ ...event, note: "younger" }); // 200 s after its first: still its series
    await recorder.flush();
    assert.deepEqual(
      created.map((object) => (object as unknown as { note: string }).note),
      [event.note, "younger", event.note],
    );
    recorder.stop();
  });

  it("forgets the rate limit of objects whose bucket has refilled (deleted objects leave nothing behind)", async () => {
    const { clock, recorder } = setup({ burst: 2 });
    for (let i = 0; i < 50; i++) recorder.record({ ...event, regarding: { ...event.regarding, name: `gone-${i}` } });
    await recorder.flush();
    const buckets = (recorder as unknown as { buckets: Map<string, unknown> }).buckets;
    assert.equal(buckets.size, 50);
    await clock.advance(2 * 300_000);
    recorder.record(event);
    assert.deepEqual([...buckets.keys()], ["MyAppInstance/shop/web/u1"]);
    recorder.stop();
  });

  it("only logs when writing an event fails", async () => {
    const { recorder, lines } = setup({ failCreate: new ServerError(500, "boom") });
    recorder.record(event);
    await recorder.flush();
    assert.ok(lines.some((l) => l.msg === "could not record event"));
    recorder.stop();
  });

  it("logs an event refused because its namespace is gone or terminating at debug, without a stack", async () => {
    const refusals = [
      new NotFoundError(404, 'namespaces "shop" not found'),
      new ForbiddenError(
        403,
        'events.events.k8s.io "web.1" is forbidden: unable to create new content in namespace shop because it is being terminated',
        "Forbidden",
        [
          {
            field: "metadata.namespace",
            message: "namespace shop is being terminated",
            reason: "NamespaceTerminating",
          },
        ],
      ),
    ];
    for (const refusal of refusals) {
      // GIVEN an event whose write is refused because of a deletion under way
      const { recorder, lines } = setup({ failCreate: refusal });
      // WHEN it is recorded
      recorder.record(event);
      await recorder.flush();
      // THEN one debug line says so, with the apiserver's message and no error object (no stack)
      assert.deepEqual(
        lines.map((l) => [l.level, l.msg, l["error"], "err" in l]),
        [[20, "event not recorded: its namespace is going", refusal.message, false]],
      );
      recorder.stop();
    }
  });

  it("a forbidden event that is not about a deletion stays a warning", async () => {
    const { recorder, lines } = setup({
      failCreate: new ForbiddenError(403, "events.events.k8s.io is forbidden: User x cannot create"),
    });
    recorder.record(event);
    await recorder.flush();
    assert.equal(lines.find((l) => l.msg === "could not record event")?.level, 40);
    recorder.stop();
  });

  it("forgets a series whose Event is gone, so a repeat records a new Event", async () => {
    // GIVEN an event recorded, then repeated, whose series patch finds the Event gone (deleted with its namespace)
    const { recorder, created, lines } = setup({
      failPatch: new NotFoundError(404, 'events.events.k8s.io "web.1" not found'),
    });
    recorder.record(event);
    recorder.record(event);
    await recorder.flush();
    assert.equal(created.length, 1);
    assert.ok(
      lines.every((l) => l.level < 40),
      "no warning",
    );
    // WHEN it happens again THEN it is a new Event, not a patch of the lost one
    recorder.record(event);
    await recorder.flush();
    assert.equal(created.length, 2);
    recorder.stop();
  });
  it("keys a series by the note as the Event holds it: notes that differ only past the cut join one series", async () => {
    const { recorder, created, patched } = setup();
    const long = "x".repeat(1024);
    recorder.record({ ...event, note: `${long} first failure` });
    recorder.record({ ...event, note: `${long} second failure` });
    await recorder.flush();
    assert.equal(created.length, 1);
    assert.equal((created[0] as { note?: string }).note?.length, 1024);
    assert.equal((patched[0]?.patch as { series: { count: number } }).series.count, 2);
  });
});

describe("eventObject", () => {
  it("fills what events.k8s.io/v1 requires", () => {
    const object = eventObject(
      { ...event, related: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "shop" } },
      "example.com/myapp-operator",
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
        reason: "Updated",
        note: "Updated Deployment web to match the spec",
        type: "Normal",
        regarding: event.regarding,
        related: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "shop" },
      },
    );
  });

  it("caps the note at 1 kB and the name at a valid length", () => {
    const long = eventObject(
      { ...event, note: "é".repeat(2000), regarding: { ...event.regarding, name: "n".repeat(253) } },
      "c",
      "pod",
      new Date(),
    );
    assert.ok(Buffer.byteLength(long["note"] as string) <= 1024);
    assert.ok((long.metadata.name ?? "").length <= 253);
  });

  it("names the Event validly when the cut falls on a '-' or '.' of the object's name", () => {
    for (const name of [`${"a".repeat(199)}-b${"c".repeat(50)}`, `${"a".repeat(199)}.${"c".repeat(50)}`]) {
      const named = eventObject({ ...event, regarding: { ...event.regarding, name } }, "c", "pod", new Date());
      assert.match(named.metadata.name ?? "", /^a+\.[0-9a-f]{16}$/);
    }
  });
});
