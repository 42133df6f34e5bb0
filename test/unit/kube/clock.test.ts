import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { realClock } from "../../../kube/clock.ts";

describe("realClock", () => {
  it("measures durations on a monotonic clock that a wall-clock step does not move", (t) => {
    // GIVEN the process's wall clock under test control
    t.mock.timers.enable({ apis: ["Date"], now: Date.UTC(2030, 0, 1) });
    const monotonicBefore = realClock.monotonicMs();
    const wallBefore = realClock.wallTimeMs();
    // WHEN the wall clock steps an hour forward, then two hours back
    t.mock.timers.setTime(Date.UTC(2030, 0, 1, 1));
    const monotonicAfterForward = realClock.monotonicMs();
    assert.equal(realClock.wallTimeMs() - wallBefore, 3_600_000, "the wall clock did jump");
    t.mock.timers.setTime(Date.UTC(2029, 11, 31, 23));
    // THEN the monotonic reading moved only by the (tiny) real time that passed, and never backwards
    const monotonicAfterBack = realClock.monotonicMs();
    assert.ok(monotonicAfterForward - monotonicBefore < 1_000, `${monotonicAfterForward - monotonicBefore} ms`);
    assert.ok(monotonicAfterBack >= monotonicAfterForward);
    assert.equal(realClock.wallTimeMs(), Date.UTC(2029, 11, 31, 23));
  });

  it("keeps pending timers unref'd so they never hold a process open", () => {
    const handle = realClock.setTimeout(() => {}, 60_000) as NodeJS.Timeout;
    try {
      assert.equal(handle.hasRef(), false);
    } finally {
      realClock.clearTimeout(handle);
    }
  });
});
