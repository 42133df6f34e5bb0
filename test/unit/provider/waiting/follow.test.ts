import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ForbiddenError, GoneError, TransportError } from "../../../../kube/index.ts";
import { followObject } from "../../../../provider/waiting/follow.ts";
import type { LiveInstance } from "../../../../provider/manifest.ts";
import { assessReadiness } from "../../../../provider/waiting/readiness.ts";
import { FakeClock, settle } from "../../runtime/fake-clock.ts";
import { FakeInstanceClient, instanceAt } from "./fake-instance-client.ts";

/** Decides "ready" on Ready for generation 2; records each progress line like the provider's reporter. */
function readyDecider(progress: string[]) {
  return (object: LiveInstance | undefined) => {
    if (!object) return "deleted";
    const verdict = assessReadiness(object, 2);
    if (verdict.state === "waiting") {
      progress.push(verdict.progress);
      return undefined;
    }
    return verdict.state;
  };
}

function setup(initial = instanceAt("10", 0)) {
  const clock = new FakeClock();
  const instance = new FakeInstanceClient({ object: initial, resourceVersion: "10" });
  const progress: string[] = [];
  const deadline = clock.monotonicMs() + 60_000;
  const run = followObject(instance, { object: initial, resourceVersion: "10" }, readyDecider(progress), {
    clock,
    deadline,
  });
  return { clock, instance, progress, run };
}

describe("followObject", () => {
  test("decides on the initial object without opening a watch", async () => {
    const { instance, run } = setup(instanceAt("10", 3));
    assert.deepEqual(await run, { decided: true, value: "ready" });
    assert.deepEqual(instance.watchesFrom, []);
  });

  test("watches from the apply's resourceVersion and decides on the event that makes it Ready", async () => {
    const { instance, progress, run, clock } = setup();
    await settle();
    instance.emit("MODIFIED", instanceAt("11", 1));
    instance.emit("MODIFIED", instanceAt("12", 2));
    instance.emit("MODIFIED", instanceAt("13", 3));
    assert.deepEqual(await run, { decided: true, value: "ready" });
    assert.deepEqual(instance.watchesFrom, ["10"]);
    assert.deepEqual(progress, ["0/3 replicas ready", "1/3 replicas ready", "2/3 replicas ready"]);
    assert.equal(clock.pending, 0, "the deadline timer is cleared");
  });

  test("resumes a watch the server ended, from the last resourceVersion seen (bookmarks included)", async () => {
    const { instance, run, clock } = setup();
    await settle();
    instance.emit("MODIFIED", instanceAt("11", 1));
    instance.emit("BOOKMARK", { ...instanceAt("15", 0), status: {} });
    instance.end();
    await clock.advance(0);
    instance.emit("MODIFIED", instanceAt("16", 3));
    assert.deepEqual(await run, { decided: true, value: "ready" });
    assert.deepEqual(instance.watchesFrom, ["10", "15"]);
  });

  test("a watch that ends at once is not reopened in a hot loop", async () => {
    const { instance, run, clock } = setup();
    await settle();
    instance.end();
    await clock.advance(999);
    assert.equal(instance.watchesFrom.length, 1, "still pausing");
    await clock.advance(1);
    assert.equal(instance.watchesFrom.length, 2, "reopened after a second");
    instance.emit("MODIFIED", instanceAt("11", 3));
    assert.equal((await run).decided, true);
  });

  test("410 Gone: reads the object afresh and watches from there", async () => {
    const { instance, run } = setup();
    await settle();
    instance.current = { object: instanceAt("40", 2), resourceVersion: "41" };
    instance.fail(new GoneError(410, "too old resource version"));
    await settle();
    assert.equal(instance.snapshots, 1);
    assert.deepEqual(instance.watchesFrom, ["10", "41"]);
    instance.emit("MODIFIED", instanceAt("42", 3));
    assert.deepEqual(await run, { decided: true, value: "ready" });
  });

  test("a dropped connection is retried after a backoff, from a fresh read", async () => {
    const { instance, run, clock } = setup();
    await settle();
    instance.fail(new TransportError(0, "socket hang up"));
    await clock.advance(999);
    assert.equal(instance.snapshots, 0, "backing off");
    instance.current = { object: instanceAt("50", 3), resourceVersion: "50" };
    await clock.advance(1);
    assert.deepEqual(await run, { decided: true, value: "ready" }, "the fresh read was already Ready");
  });

  test("an error retrying cannot fix propagates", async () => {
    const { instance, run } = setup();
    await settle();
    instance.fail(new ForbiddenError(403, "cannot watch myappinstances"));
    await assert.rejects(run, ForbiddenError);
  });

  test("DELETED is decided as gone", async () => {
    const { instance, run } = setup();
    await settle();
    instance.emit("DELETED", instanceAt("60", 0));
    assert.deepEqual(await run, { decided: true, value: "deleted" });
  });

  test("the deadline aborts the watch and returns the last state seen", async () => {
    const { instance, run, clock } = setup();
    await settle();
    instance.emit("MODIFIED", instanceAt("11", 2));
    await clock.advance(59_999);
    assert.equal(instance.aborted, 0);
    await clock.advance(1);
    const result = await run;
    assert.equal(result.decided, false);
    assert.equal(result.decided === false && result.last?.metadata.resourceVersion, "11");
    assert.equal(instance.aborted, 1);
  });
});
