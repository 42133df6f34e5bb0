import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { npmWrappers, onLauncherGone, procTable, type ProcessTable } from "../../../operator/runtime/launcher-watch.ts";

/** A process table: pid → [argv, parent pid]; a pid not in it is gone. */
function table(processes: Record<number, readonly [readonly string[], number]>): ProcessTable {
  return {
    commandLine: (pid) => processes[pid]?.[0],
    parentOf: (pid) => processes[pid]?.[1],
  };
}

/** Resolves once `predicate` holds, polling on the event loop (the watch's timer is real); fails after 30 s. */
async function eventually(predicate: () => boolean, what = "condition"): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (!predicate()) {
    assert.ok(performance.now() < deadline, `${what} never held`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** `processes` as a table that counts the lookups of a pid's parent: the watch's looks at npm. */
function countingTable(processes: ProcessTable): ProcessTable & { readonly parentLookups: () => number } {
  let lookups = 0;
  return {
    commandLine: (pid) => processes.commandLine(pid),
    parentOf: (pid) => {
      lookups++;
      return processes.parentOf(pid);
    },
    parentLookups: () => lookups,
  };
}

// What npm 11 runs, read from /proc: `npx myapp-operator --namespaces=shop` and `npm run operator -- --x`.
const npx = table({
  20: [["sh", "-c", "'myapp-operator' --namespaces=shop"], 10],
  10: [["npm exec myapp-operator --namespaces=shop"], 5],
});
const npxEnv = { npm_command: "exec", npm_lifecycle_script: "'myapp-operator'" };

describe("npmWrappers", () => {
  it("finds npm and the shell it ran the command in, for npx and npm run", () => {
    assert.deepEqual(npmWrappers(npxEnv, 20, npx), { shell: 20, npm: 10 });
    const run = table({ 20: [["/bin/bash", "-c", "node tools/operator.ts --x"], 10], 10: [["npm run operator"], 5] });
    assert.deepEqual(npmWrappers({ npm_lifecycle_script: "node tools/operator.ts" }, 20, run), { shell: 20, npm: 10 });
  });

  it("finds none when npm's environment was only inherited: a launcher started the operator itself", () => {
    // `npm start` runs tools/main.ts, which spawns the operator directly: our parent is that node process
    const launcher = table({
      30: [["/usr/bin/node", "tools/main.ts"], 20],
      20: [["sh", "-c", "node tools/main.ts"], 10],
    });
    assert.equal(npmWrappers({ npm_lifecycle_script: "node tools/main.ts" }, 30, launcher), undefined);
    // a shell that runs something else than npm's script (a user's own `sh -c` inside an npm script)
    const other = table({ 20: [["sh", "-c", "myapp-operator"], 10], 10: [["npm"], 5] });
    assert.equal(npmWrappers({ npm_lifecycle_script: "node tools/main.ts" }, 20, other), undefined);
  });

  it("finds none outside npm, or when the parent is already gone", () => {
    assert.equal(npmWrappers({}, 20, npx), undefined);
    assert.equal(npmWrappers(npxEnv, 99, npx), undefined);
    // the shell already re-parented to init: npm is gone, there is nothing left to follow
    const orphan = table({ 20: [["sh", "-c", "'myapp-operator'"], 1] });
    assert.equal(npmWrappers(npxEnv, 20, orphan), undefined);
  });
});

describe("onLauncherGone", () => {
  it("fires once when the shell ends and we are re-parented (npm forwarded SIGTERM to it)", async () => {
    let parent = 20;
    let parentLooks = 0;
    let fired = 0;
    const processes = countingTable(npx);
    const stop = onLauncherGone({ shell: 20, npm: 10 }, () => fired++, {
      parentPid: () => (parentLooks++, parent),
      table: processes,
      intervalMs: 1,
    });
    // GIVEN both wrappers there, looked at many times: keep running
    await eventually(
      () => fired > 0 || (parentLooks >= 10 && processes.parentLookups() >= 10),
      "10 looks at the shell and npm",
    );
    assert.equal(fired, 0, "both wrappers there: keep running");
    // WHEN the shell ends
    parent = 1;
    await eventually(() => fired > 0);
    // THEN it fired once, and looks no more (an interval of the same period, beside it, turns 10 times meanwhile)
    const looksWhenFired = parentLooks;
    let turns = 0;
    const witness = setInterval(() => turns++, 1);
    await eventually(() => turns >= 10, "10 turns of the witness interval");
    clearInterval(witness);
    assert.equal(fired, 1);
    assert.equal(parentLooks, looksWhenFired, "the watch stopped looking once it fired");
    stop();
  });

  it("fires when npm itself is gone while its shell still waits on us (npm SIGKILLed)", async () => {
    const processes: Record<number, readonly [readonly string[], number]> = {
      20: [["sh", "-c", "'myapp-operator'"], 10],
      10: [["npm exec myapp-operator"], 5],
    };
    let fired = 0;
    const stop = onLauncherGone({ shell: 20, npm: 10 }, () => fired++, {
      parentPid: () => 20,
      table: table(processes),
      intervalMs: 1,
    });
    processes[20] = [["sh", "-c", "'myapp-operator'"], 1];
    await eventually(() => fired === 1);
    stop();
  });

  it("reads this process's parent from Linux's /proc", () => {
    assert.equal(procTable.parentOf(process.pid), process.ppid);
    assert.ok(procTable.commandLine(process.pid)?.some((arg) => arg.includes("node")));
    assert.equal(procTable.parentOf(2 ** 22 + 1), undefined, "a pid above Linux's maximum is never there");
  });
});
