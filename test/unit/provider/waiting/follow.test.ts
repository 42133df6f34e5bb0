import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ForbiddenError, GoneError, TransportError } from "../../../../kube/index.ts";
import { followObject } from "../../../../provider/waiting/follow.ts";
import type { LiveInstance } from "../../../../provider/manifest.ts";
import { assessReadiness } from "../../../../provider/waiting/readiness.ts";
import { FakeClock, settle } from "../../runtime/fake-clock.ts";
import { FakeInstancePort, instanceAt } from "./fake-instance-port.ts";

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
  const port = new FakeInstancePort({ object: initial, resourceVersion: "10" });
  const progress: string[] = [];
  const deadline = clock.monotonicMs() + 60_000;
  const run = followObject(port, { object: initial, resourceVersion: "10" }, readyDecider(progress), {
    clock,
    deadline,
  });
  return { clock, port, progress, run };
}

describe("followObject", () => {
  test("decides on the initial object without opening a watch", async () => {
    const { port, run } = setup(instanceAt("10", 3));
    assert.deepEqual(await run, { decided: true, value: "ready" });
    assert.deepEqual(port.watchesFrom, []);
  });

  test("watches from the apply's resourceVersion and decides on the event that makes it Ready", async () => {
    const { port, progress, run, clock } = setup();
    await settle();
    port.emit("MODIFIED", instanceAt("11", 1));
    port.emit("MODIFIED", instanceAt("12", 2));
    port.emit("MODIFIED", instanceAt("13", 3));
    assert.deepEqual(await run, { decided: true, value: "ready" });
    assert.deepEqual(port.watchesFrom, ["10"]);
    assert.deepEqual(progress, ["0/3 replicas ready", "1/3 replicas ready", "2/3 replicas ready"]);
    assert.equal(clock.pending, 0, "the deadline timer is cleared");
  });

  test("resumes a watch the server ended, from the last resourceVersion seen (bookmarks included)", async () => {
    const { port, run, clock } = setup();
    await settle();
    port.emit("MODIFIED", instanceAt("11", 1));
    port.emit("BOOKMARK", { ...instanceAt("15", 0), status: {} });
    port.end();
    await clock.advance(0);
    port.emit("MODIFIED", instanceAt("16", 3));
    assert.deepEqual(await run, { decided: true, value: "ready" });
    assert.deepEqual(port.watchesFrom, ["10", "15"]);
  });

  test("a watch that ends at once is not reopened in a hot loop", async () => {
    const { port, run, clock } = setup();
    await settle();
    port.end();
    await clock.advance(999);
    assert.equal(port.watchesFrom.length, 1, "still pausing");
    await clock.advance(1);
    assert.equal(port.watchesFrom.length, 2, "reopened after a second");
    port.emit("MODIFIED", instanceAt("11", 3));
    assert.equal((await run).decided, true);
  });

  test("410 Gone: reads the object afresh and watches from there", async () => {
    const { port, run } = setup();
    await settle();
    port.current = { object: instanceAt("40", 2), resourceVersion: "41" };
    port.fail(new GoneError(410, "too old resource version"));
    await settle();
    assert.equal(port.snapshots, 1);
    assert.deepEqual(port.watchesFrom, ["10", "41"]);
    port.emit("MODIFIED", instanceAt("42", 3));
    assert.deepEqual(await run, { decided: true, value: "ready" });
  });

  test("a dropped connection is retried after a backoff, from a fresh read", async () => {
    const { port, run, clock } = setup();
    await settle();
    port.fail(new TransportError(0, "socket hang up"));
    await clock.advance(999);
    assert.equal(port.snapshots, 0, "backing off");
    port.current = { object: instanceAt("50", 3), resourceVersion: "50" };
    await clock.advance(1);
    assert.deepEqual(await run, { decided: true, value: "ready" }, "the fresh read was already Ready");
  });

  test("an error retrying cannot fix propagates", async () => {
    const { port, run } = setup();
    await settle();
    port.fail(new ForbiddenError(403, "cannot watch myappinstances"));
    await assert.rejects(run, ForbiddenError);
  });

  test("DELETED is decided as gone", async () => {
    const { port, run } = setup();
    await settle();
    port.emit("DELETED", instanceAt("60", 0));
    assert.deepEqual(await run, { decided: true, value: "deleted" });
  });

  test("the deadline aborts the watch and returns the last state seen", async () => {
    const { port, run, clock } = setup();
    await settle();
    port.emit("MODIFIED", instanceAt("11", 2));
    await clock.advance(59_999);
    assert.equal(port.aborted, 0);
    await clock.advance(1);
    const result = await run;
    assert.equal(result.decided, false);
    assert.equal(result.decided === false && result.last?.metadata.resourceVersion, "11");
    assert.equal(port.aborted, 1);
  });
});
