import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { instanceLabel } from "../../../../provider/console.ts";
import { progressLine, quietWaitMs, refreshMs, waitProgress } from "../../../../provider/waiting/progress.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";

const web = instanceLabel({ logicalName: "web", namespace: "shop", name: "web-095128ad" });

describe("progressLine: who, what and how long", () => {
  test("names the instance, the phase, the time spent and the time allowed", () => {
    assert.equal(
      progressLine({
        label: web,
        phase: "rolling out nginx:1.28: 1/3 replicas updated",
        elapsedMs: 12_400,
        timeoutMs: 600_000,
      }),
      "web (shop/web-095128ad): rolling out nginx:1.28: 1/3 replicas updated (12s of 600s)",
    );
  });

  test("counts whole seconds spent, never below zero", () => {
    assert.equal(
      progressLine({ label: "db (shop/db-1)", phase: "0/1 replicas ready", elapsedMs: -3, timeoutMs: 20_000 }),
      "db (shop/db-1): 0/1 replicas ready (0s of 20s)",
    );
  });
});

describe("waitProgress: readable at a hundred instances", () => {
  test("a wait that shares its operation's timeout counts from when the operation began", async () => {
    // GIVEN an apply that waited 40 s for the admission webhook, then the wait for Ready of the same update
    const clock = new FakeClock();
    const startedMs = clock.monotonicMs();
    await clock.advance(40_000);
    const lines: string[] = [];
    const progress = waitProgress("web", { timeoutMs: 600_000, write: (line) => lines.push(line), clock, startedMs });
    progress.report("0/1 replicas ready");
    await clock.advance(quietWaitMs);
    progress.stop();
    // THEN its line says what is spent of the one timeout
    assert.deepEqual(lines, ["web: 0/1 replicas ready (45s of 600s)"]);
  });

  test("a wait shorter than the quiet period prints nothing, not even Ready", async () => {
    // GIVEN a wait that gets two progress lines and ends within the quiet period
    const clock = new FakeClock();
    const lines: string[] = [];
    const progress = waitProgress("web", { timeoutMs: 600_000, write: (line) => lines.push(line), clock });
    progress.report("waiting for the operator to act on generation 1");
    await clock.advance(1_000);
    progress.report("1/2 replicas ready");
    // WHEN it ends
    progress.stop();
    await clock.advance(refreshMs * 3);
    // THEN nothing was printed, and no timer is left behind
    assert.deepEqual(lines, []);
    assert.equal(clock.pending, 0);
  });

  test("a long wait prints the latest state once the quiet period is over, then each change at once", async () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    const progress = waitProgress("db", { timeoutMs: 600_000, write: (line) => lines.push(line), clock });
    progress.report("waiting for the operator to act on generation 1");
    progress.report("0/1 replicas ready");
    await clock.advance(quietWaitMs);
    progress.report("0/1 replicas ready");
    await clock.advance(2_000);
    progress.report("1/1 replicas ready");
    progress.stop();
    assert.deepEqual(lines, ["db: 0/1 replicas ready (5s of 600s)", "db: 1/1 replicas ready (7s of 600s)"]);
  });

  test("a wait on which nothing changes says so again at least every 30 s, with the time spent", async () => {
    // GIVEN an operator that never acts (the issue: one line, then silence for 600 s)
    const clock = new FakeClock();
    const lines: string[] = [];
    const progress = waitProgress(web, { timeoutMs: 600_000, write: (line) => lines.push(line), clock });
    progress.report("waiting for the operator to act on generation 1");
    // WHEN two minutes pass without a change
    await clock.advance(120_000);
    progress.stop();
    // THEN a line came after the quiet period and then every 30 s
    const phase = "web (shop/web-095128ad): waiting for the operator to act on generation 1";
    assert.deepEqual(lines, [
      `${phase} (5s of 600s)`,
      `${phase} (35s of 600s)`,
      `${phase} (65s of 600s)`,
      `${phase} (95s of 600s)`,
    ]);
  });

  test("a change restarts the period: no line follows another within it unless something changed", async () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    const progress = waitProgress("web", { timeoutMs: 60_000, write: (line) => lines.push(line), clock });
    progress.report("1/3 replicas ready");
    await clock.advance(20_000); // printed at 5 s
    progress.report("2/3 replicas ready"); // printed at 20 s
    await clock.advance(29_000); // 49 s: nothing yet, the period runs from 20 s
    assert.deepEqual(lines, ["web: 1/3 replicas ready (5s of 60s)", "web: 2/3 replicas ready (20s of 60s)"]);
    await clock.advance(1_000);
    assert.equal(lines.at(-1), "web: 2/3 replicas ready (50s of 60s)");
    progress.stop();
  });

  test("a shorter refresh may be asked for, never a longer one", async () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    const write = (line: string) => lines.push(line);
    const slow = waitProgress("a", { timeoutMs: 600_000, write, clock, refreshMs: 120_000 });
    slow.report("waiting");
    await clock.advance(quietWaitMs + refreshMs);
    slow.stop();
    assert.deepEqual(lines, ["a: waiting (5s of 600s)", "a: waiting (35s of 600s)"]);
  });

  test("a wait with no phase yet prints nothing, and its first phase after the quiet period prints at once", async () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    const progress = waitProgress("web", { timeoutMs: 600_000, write: (line) => lines.push(line), clock });
    await clock.advance(40_000);
    assert.deepEqual(lines, []);
    progress.report("1/1 replicas ready");
    progress.stop();
    assert.deepEqual(lines, ["web: 1/1 replicas ready (40s of 600s)"]);
  });
});
