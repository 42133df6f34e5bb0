/**
 * Every plugin this project launches ends with its engine's death (it looks every second or so). A SIGKILLed
 * `pulumi up` tells its plugins nothing, and pulumi's Go plugins health-check their engine only every 5 minutes (the
 * chaos suite once measured 293 s until all were gone). Here each plugin is started as the engine starts it (its
 * engine's address as the argument, stdout piped to the engine), by a stand-in engine process that is then
 * SIGKILLed, and must be gone well before that health check could have ended it; how long it took is reported.
 *
 * The dynamic-provider launcher (pulumi-plugin/) needs only Node; the Go plugins need the toolchain
 * (`npm run toolchain`). No cluster: run with `npm test -- test/e2e/plugin-parent-death.test.ts`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { repoRoot, toolchainBinDir } from "../../tools/lib/paths.ts";
import { readProcess, stillRunning, type ProcessInfo } from "../support/process-tree.ts";

/** Upstream's health check ends a plugin 5 minutes after its engine: a plugin still there at half that did not see. */
const upstreamHealthCheckMs = 5 * 60_000;
const deadlineMs = upstreamHealthCheckMs / 2;

// The stand-in engine: starts the plugin with stdout piped to itself (the engine reads the plugin's port from it)
// and stderr to /dev/null (a write there must not be what ends the plugin), prints "<pid> <first line>", idles.
const engineScript = `
const { spawn } = require("node:child_process");
const [bin, ...args] = process.argv.slice(1);
const plugin = spawn(bin, args, { stdio: ["pipe", "pipe", "ignore"] });
plugin.stdout.once("data", (chunk) => process.stdout.write(plugin.pid + " " + String(chunk).split("\\n")[0] + "\\n"));
setInterval(() => {}, 60_000);
`;

/** Starts `bin` under a stand-in engine, SIGKILLs the engine, and waits until the plugin is gone (fails at the deadline). */
async function endsWithItsEngine(t: TestContext, bin: string, env: NodeJS.ProcessEnv): Promise<void> {
  // An engine address that accepts connections (and answers nothing), as a live engine's would.
  const server = createServer((socket) => socket.on("error", () => {}));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => server.close());
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  const engine = spawn(process.execPath, ["-e", engineScript, bin, address], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  t.after(() => engine.kill("SIGKILL"));
  let timer: NodeJS.Timeout | undefined;
  const [first] = (await Promise.race([
    once(engine.stdout, "data"),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${bin} printed no port within 60 s`)), 60_000);
    }),
  ]).finally(() => clearTimeout(timer))) as [Buffer];
  const [pidText, port] = String(first).trim().split(" ");
  assert.match(port ?? "", /^\d+$/, `${bin} prints its port first, as the engine expects: ${String(first)}`);
  const plugin = readProcess(Number(pidText));
  assert.ok(plugin, `${bin} runs`);
  t.after(() => {
    if (stillRunning(plugin)) process.kill(plugin.pid, "SIGKILL");
  });
  assert.equal(plugin.ppid, engine.pid, "the plugin is the engine's child");

  // WHEN the engine dies without a word
  const killedAt = performance.now();
  engine.kill("SIGKILL");
  await gone(t, plugin, killedAt, bin);
}

async function gone(t: TestContext, plugin: ProcessInfo, since: number, what: string): Promise<void> {
  while (stillRunning(plugin)) {
    const outlived = performance.now() - since;
    assert.ok(outlived < deadlineMs, `${path.basename(what)} still runs ${Math.round(outlived)} ms after its engine`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.diagnostic(`${path.basename(what)}: gone ${Math.round(performance.now() - since)} ms after its engine`);
}

describe("a plugin this project launches ends with its engine", { timeout: 3 * deadlineMs + 5 * 60_000 }, () => {
  it("the dynamic-provider launcher's host (pulumi-plugin/pulumi-resource-pulumi-nodejs), before any call", async (t) => {
    // GIVEN the host serving, with no call yet (the provider's own watch starts with its first call)
    const env = { ...process.env, PATH: [path.dirname(process.execPath), process.env.PATH].join(path.delimiter) };
    // WHEN its engine dies THEN it is gone
    await endsWithItsEngine(t, path.join(repoRoot, "pulumi-plugin/pulumi-resource-pulumi-nodejs"), env);
  });

  for (const plugin of ["pulumi-language-nodejs", "pulumi-resource-kubernetes"]) {
    it(`${plugin}, built by the toolchain`, async (t) => {
      const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
      const env = { ...process.env, PATH: [binDir, path.dirname(process.execPath), process.env.PATH].join(":") };
      await endsWithItsEngine(t, path.join(binDir, plugin), env);
    });
  }
});
