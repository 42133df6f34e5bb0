import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { quietWaitMs, waitProgress } from "../../../provider/progress.ts";
import { FakeClock } from "../runtime/fake-clock.ts";

describe("waitProgress: readable at a hundred instances", () => {
  test("a wait shorter than the quiet period prints nothing, not even Ready", async () => {
    // GIVEN a wait that gets two progress lines and ends within the quiet period
    const clock = new FakeClock();
    const lines: string[] = [];
    const progress = waitProgress("web", (line) => lines.push(line), clock);
    progress.report("waiting for the operator to act on generation 1");
    await clock.advance(1_000);
    progress.report("1/2 replicas ready");
    // WHEN it ends
    progress.stop();
    await clock.advance(quietWaitMs * 2);
    // THEN nothing was printed
    assert.deepEqual(lines, []);
  });

  test("a long wait prints the latest state once the quiet period is over, then each change once", async () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    const progress = waitProgress("db", (line) => lines.push(line), clock);
    progress.report("waiting for the operator to act on generation 1");
    progress.report("0/1 replicas ready");
    await clock.advance(quietWaitMs);
    progress.report("0/1 replicas ready");
    progress.report("1/1 replicas ready");
    progress.stop();
    assert.deepEqual(lines, ["db: 0/1 replicas ready", "db: 1/1 replicas ready"]);
  });
});
