/**
 * A long render gives way while the operator is busy: stopped once it turns long, run again through to its end once
 * the operator has been quiet. Stand-in guests (node spinning on its own CPU clock) play the long render.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { idleClassAfterCpuSeconds } from "../../../chart/guest-priority.ts";
import { findPrlimit, GuestYielded, runGuest } from "../../../chart/guest-process.ts";
import { quietMs, untilQuiet } from "../../../chart/long-render-yield.ts";
import { defaultRenderLimits, helmRenderer } from "../../../chart/index.ts";
import { chartArchive } from "../../support/chart-archive.ts";

const env = { PATH: process.env["PATH"] ?? "" };
const limits = { ...defaultRenderLimits, memoryMiB: 1024, cpuSeconds: 20, timeoutSeconds: 60 };

/** A node program that spins until it has used `cpuSeconds` of its own CPU, then prints `output`. */
function spinner(cpuSeconds: number, output: string): string {
  return `const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
    while (cpu() < ${cpuSeconds}) {}
    process.stdout.write(${JSON.stringify(output)});`;
}

test("untilQuiet waits for the quiet period, or for its bound", { timeout: 120_000 }, async () => {
  let busyUntil = performance.now() + 300;
  let started = performance.now();
  await untilQuiet(() => performance.now() < busyUntil, 30_000);
  const waited = performance.now() - started;
  assert.ok(waited >= 300 + quietMs - 50, `waited for busy, then ${quietMs} ms of quiet: ${Math.round(waited)} ms`);

  // never quiet: the bound ends the wait (else it never ends: the test's timeout fails it)
  busyUntil = Infinity;
  started = performance.now();
  await untilQuiet(() => performance.now() < busyUntil, 500);
  const bounded = performance.now() - started;
  assert.ok(bounded >= 450, `never quiet: waited its bound (${Math.round(bounded)} ms)`);
});

for (const { name, prlimit } of [
  { name: "prlimit", prlimit: findPrlimit() },
  { name: "watchdog", prlimit: undefined },
]) {
  test(`${name}: a guest that turns long gives way while asked to; a short one never does`, async () => {
    const long = runGuest({
      binary: process.execPath,
      args: ["-e", spinner(idleClassAfterCpuSeconds + 10, "never")],
      env,
      limits,
      prlimit,
      chrt: undefined,
      yieldWhen: () => true,
    });
    await assert.rejects(long, (error: unknown) => {
      assert.ok(error instanceof GuestYielded, String(error));
      assert.ok(error.cpuSeconds >= idleClassAfterCpuSeconds, `stopped once long: ${error.cpuSeconds} s`);
      assert.ok(error.cpuSeconds < idleClassAfterCpuSeconds + 5, `and soon after: ${error.cpuSeconds} s`);
      return true;
    });
    const short = await runGuest({
      binary: process.execPath,
      args: ["-e", spinner(0.05, "short")],
      env,
      limits,
      prlimit,
      chrt: undefined,
      yieldWhen: () => true,
    });
    assert.equal(short, "short");
  });
}

test("a long render gives way once while the operator is busy, then runs through once it is quiet", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "myapp-long-helm-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const fake = path.join(dir, "helm");
  const rendered = "---\n# Source: c/templates/a.yaml\nkind: ConfigMap\nmetadata:\n  name: slow\n";
  const program = spinner(idleClassAfterCpuSeconds + 0.3, rendered);
  await writeFile(fake, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} -e ${shellQuote(program)}\n`);
  await chmod(fake, 0o755);

  // Busy until the render gives way; then quiet long enough for it to start again; then busy for good, which the
  // second run must not heed (else it would give way again and wait out the wall-time bound).
  let yields = 0;
  let quietLooks = 0;
  const busy = () => {
    if (yields === 0) return true;
    quietLooks += 1;
    return quietLooks > quietMs / 100 + 2 ? true : false;
  };
  const renderer = helmRenderer({
    binary: fake,
    limits: { ...limits, timeoutSeconds: 30 },
    prlimit: false,
    chrt: false,
    busy,
    onYield: (request, cpuSeconds) => {
      yields += 1;
      assert.equal(request.release, "r");
      assert.ok(cpuSeconds >= idleClassAfterCpuSeconds);
    },
  });
  const result = await renderer.render({ chart: await chartArchive(), release: "r", namespace: "n", values: {} });
  assert.match(result.manifest, /name: slow/);
  assert.equal(yields, 1, "gave way once, then ran through");
  // It ran again on the quiet: before `busy` turned true again, which it would have had it waited out its wall-time
  // bound (looking every 100 ms for 30 s)
  assert.ok(quietLooks <= quietMs / 100 + 2, `ran again on the quiet, after ${quietLooks} looks at busy`);
});

test("a render with no busy signal (the provider's previews) runs through", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "myapp-long-helm-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const fake = path.join(dir, "helm");
  const program = spinner(idleClassAfterCpuSeconds + 0.2, "---\n# Source: c/templates/a.yaml\nkind: ConfigMap\n");
  await writeFile(fake, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} -e ${shellQuote(program)}\n`);
  await chmod(fake, 0o755);
  let yields = 0;
  const renderer = helmRenderer({ binary: fake, limits, prlimit: false, chrt: false, onYield: () => (yields += 1) });
  const result = await renderer.render({ chart: await chartArchive(), release: "r", namespace: "n", values: {} });
  assert.match(result.manifest, /kind: ConfigMap/);
  assert.equal(yields, 0);
});

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
