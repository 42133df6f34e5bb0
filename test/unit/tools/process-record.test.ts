import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import {
  isRunning,
  processArgv,
  processCommandLine,
  processParent,
  processStartTime,
  runningProcess,
  stopProcess,
  writeProcessRecord,
} from "../../../tools/lib/process-record.ts";

test("a record names a process by pid, start time and boot; a pid alone is not trusted", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "record-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "p.json");
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const record = writeProcessRecord(file, child.pid!, { role: "test" });
  assert.equal(record.startTime, processStartTime(child.pid!));
  assert.equal(runningProcess(file)?.pid, child.pid);

  // The same pid with another start time is some other process: the file is stale and goes.
  writeFileSync(file, JSON.stringify({ ...record, startTime: "1" }));
  assert.equal(runningProcess(file), undefined);
  assert.equal(existsSync(file), false);

  // A bare pid (the old format) is not trusted either.
  writeFileSync(file, String(child.pid));
  assert.equal(runningProcess(file), undefined);

  await stopProcess(record);
  await exited;
  assert.equal(isRunning(record), false);
});

test("a process's arguments are read each as given, and its parent by pid", async (t) => {
  // GIVEN a child with an argument holding spaces
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "a b"], { stdio: "ignore" });
  t.after(() => child.kill());
  await new Promise((resolve) => child.on("spawn", resolve));
  // WHEN its arguments and parent are read THEN the argument is one, and its parent is this process
  assert.deepEqual(processArgv(child.pid!).slice(1), ["-e", "setInterval(() => {}, 1000)", "a b"]);
  assert.equal(processCommandLine(child.pid!), `${processArgv(child.pid!)[0]} -e setInterval(() => {}, 1000) a b`);
  assert.equal(processParent(child.pid!), process.pid);
  // AND a process that is gone has neither
  child.kill();
  await new Promise((resolve) => child.on("exit", resolve));
  assert.deepEqual(processArgv(child.pid!), []);
  assert.equal(processParent(child.pid!), undefined);
});
