import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";

const logOutput = new URL("../../../operator/log-output.ts", import.meta.url).href;
// The script runs from a temporary directory: it imports pino by the URL this checkout resolves it to.
const pinoUrl = import.meta.resolve("pino");

/** Runs `script` in a Node whose stdout reader is gone at once; its exit code, or "hung" after `withinMs`. */
async function exitWithoutReader(t: { after: (fn: () => void) => void }, script: string, withinMs: number) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "log-output-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "stopping.mjs");
  writeFileSync(file, script);
  const child = spawn(process.execPath, [file], { stdio: ["ignore", "pipe", "inherit"] });
  child.stdout.destroy();
  return new Promise<number | "hung">((resolve) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve("hung");
    }, withinMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code ?? -1);
    });
  });
}

describe("logsWritten", () => {
  it("lets a process whose stdout reader died log its last lines and exit", async (t) => {
    // GIVEN the operator's log destination, whose reader is gone before the process stops
    // WHEN it logs as the operator's stop does and exits once logsWritten resolves
    const code = await exitWithoutReader(
      t,
      `import { pino } from ${JSON.stringify(pinoUrl)};
       import { logsWritten, stdoutDestination } from ${JSON.stringify(logOutput)};
       const destination = stdoutDestination();
       const logger = pino({}, destination);
       setTimeout(async () => {
         for (let i = 0; i < 5; i++) logger.info({ i }, "stopping");
         logger.info("operator stopped");
         await logsWritten(destination);
         process.exit(0);
       }, 300);`,
      30_000,
    );
    // THEN it exits (exiting with the lines in flight instead retries their synchronous write forever: sonic-boom 4)
    assert.equal(code, 0);
  });

  it("resolves at its bound when nothing is written", async (t) => {
    const { stdoutDestination, logsWritten } = await import(logOutput);
    const destination = stdoutDestination();
    // GIVEN nothing written, so no drain ever comes, and a clock that moves only when told
    t.mock.timers.enable({ apis: ["setTimeout"] });
    let resolved = false;
    const written = logsWritten(destination, 50).then(() => (resolved = true));
    const turns = async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    // THEN it still waits 1 ms before its bound, and resolves at it
    t.mock.timers.tick(49);
    await turns();
    assert.equal(resolved, false, "resolved before its bound");
    t.mock.timers.tick(1);
    await written;
    assert.equal(resolved, true);
  });
});
