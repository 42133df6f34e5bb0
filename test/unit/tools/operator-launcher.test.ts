/** The one operator launcher of npm start, the tests and the benchmarks, with a stand-in for the operator. */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import {
  freePort,
  launchOperator,
  operatorCommand,
  operatorMain,
  waitForProbe,
} from "../../../tools/lib/operator-launcher.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "operator-launcher-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A stand-in for operator/main.ts: it reports how Node was started, serves /healthz on the probe address it was
 * given (0: a free port), says "operator starting" with its ports as pino does, and exits on SIGTERM. STANDIN env:
 * "crash" exits before the start, "stubborn" ignores SIGTERM.
 */
const standIn = path.join(dir, "stand-in.mjs");
writeFileSync(
  standIn,
  `
import { createServer } from "node:http";
const mode = process.env.STANDIN ?? "";
let protoThrows = false;
try { ({}).__proto__; } catch { protoThrows = true; }
const arenaMax = process.env.MALLOC_ARENA_MAX;
console.log(JSON.stringify({ msg: "invoked", execArgv: process.execArgv, argv: process.argv.slice(2), protoThrows, arenaMax }));
if (mode === "crash") { console.error("cannot load the kubeconfig"); process.exit(3); }
const flag = (name) => process.argv.find((arg) => arg.startsWith("--" + name + "="))?.split("=")[1] ?? "";
const port = Number(flag("health-probe-bind-address").split(":")[1]);
const server = createServer((req, res) => res.end(req.url === "/healthz" ? "ok" : "?"));
server.listen(port, "127.0.0.1", () => {
  const probePort = server.address().port;
  console.log(JSON.stringify({ level: 30, msg: "operator starting", identity: "stand-in-1", metricsPort: 9999, probePort }));
  console.error("a line that is not JSON");
});
process.on("SIGTERM", () => { if (mode !== "stubborn") process.exit(0); });
`,
);

describe("operatorCommand", () => {
  it("puts --disable-proto=throw first, the caller's Node flags before the script, and its flags last", () => {
    assert.deepEqual(
      operatorCommand({
        script: "dist/operator.mjs",
        nodeOptions: ["--max-old-space-size=768"],
        namespaces: ["a", "b"],
        args: ["--concurrency=4"],
      }),
      [
        "--disable-proto=throw",
        "--max-old-space-size=768",
        "dist/operator.mjs",
        "--namespaces=a,b",
        "--metrics-bind-address=127.0.0.1:0",
        "--health-probe-bind-address=127.0.0.1:0",
        "--concurrency=4",
      ],
    );
  });

  it("runs operator/main.ts unless told otherwise, watches every namespace without namespaces, binds given ports", () => {
    assert.deepEqual(operatorCommand({ metricsPort: 4001, probePort: 4002 }), [
      "--disable-proto=throw",
      operatorMain,
      "--metrics-bind-address=127.0.0.1:4001",
      "--health-probe-bind-address=127.0.0.1:4002",
    ]);
  });
});

describe("launchOperator", () => {
  it("starts the script under --disable-proto=throw, collects its lines and reads its ports from 'operator starting'", async (t) => {
    // GIVEN the stand-in launched with a namespace and a flag
    const echoed: string[] = [];
    const operator = launchOperator({
      script: standIn,
      namespaces: ["ns1"],
      args: ["--concurrency=2"],
      onLine: (text) => echoed.push(text),
    });
    t.after(() => operator.stop(1_000));

    // WHEN it has started
    const started = await operator.started({ timeoutMs: 10_000 });

    // THEN the URLs are those its line names, and Node ran it with __proto__ disabled and the flags in order
    assert.equal(started.identity, "stand-in-1");
    assert.equal(started.metricsUrl, "http://127.0.0.1:9999/metrics");
    assert.match(started.probeUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const invoked = await operator.waitForLog((line) => line.msg === "invoked");
    assert.deepEqual(invoked.execArgv, ["--disable-proto=throw"]);
    assert.equal(invoked.protoThrows, true);
    // AND with the container's allocator setting (two malloc arenas), unless this environment names its own
    assert.equal(invoked.arenaMax, process.env["MALLOC_ARENA_MAX"] ?? "2");
    assert.deepEqual(invoked.argv, [
      "--namespaces=ns1",
      "--metrics-bind-address=127.0.0.1:0",
      "--health-probe-bind-address=127.0.0.1:0",
      "--concurrency=2",
    ]);
    // AND a line that is not JSON is kept as text, with its stream; every raw line reached onLine
    const text = await operator.waitForLog((line) => line.msg === "a line that is not JSON");
    assert.equal(text.stream, "stderr");
    assert.ok(echoed.includes("a line that is not JSON"));
    // AND its /healthz answers, and SIGTERM ends it cleanly
    await waitForProbe(operator, started.probeUrl, "/healthz", { timeoutMs: 10_000, intervalMs: 20 });
    assert.deepEqual(await operator.stop(5_000), { code: 0, signal: null });
    assert.deepEqual(await operator.stop(5_000), { code: 0, signal: null }, "a second stop returns the same exit");
  });

  it("leaves an allocator setting the caller's environment names to it", async (t) => {
    const operator = launchOperator({ script: standIn, env: { ...process.env, MALLOC_ARENA_MAX: "4" } });
    t.after(() => operator.stop(1_000));
    const invoked = await operator.waitForLog((line) => line.msg === "invoked", { timeoutMs: 10_000 });
    assert.equal(invoked.arenaMax, "4");
  });

  it("fails the start at once, with its last lines, when the process exits first", async () => {
    const operator = launchOperator({ script: standIn, env: { ...process.env, STANDIN: "crash" } });
    // (the exit's message, not the timeout's "no ... within": the exit ended the wait)
    await assert.rejects(operator.started({ timeoutMs: 30_000 }), (error: Error) => {
      assert.match(error.message, /operator exited before it started: \{"code":3,"signal":null\}/);
      assert.match(error.message, /cannot load the kubeconfig/);
      return true;
    });
  });

  it("sends SIGKILL when SIGTERM is ignored past the grace period", async (t) => {
    const operator = launchOperator({ script: standIn, env: { ...process.env, STANDIN: "stubborn" } });
    t.after(() => operator.kill());
    await operator.started({ timeoutMs: 10_000 });
    assert.deepEqual(await operator.stop(300), { code: null, signal: "SIGKILL" });
  });

  it("ends a wait for a log line when its signal aborts", async (t) => {
    const operator = launchOperator({ script: standIn });
    t.after(() => operator.stop(1_000));
    const abort = new AbortController();
    const waiting = operator.waitForLog(() => false, { what: "a line that never comes", signal: abort.signal });
    abort.abort(new Error("the benchmark's time budget is spent"));
    await assert.rejects(waiting, /gave up waiting for a line that never comes: the benchmark's time budget is spent/);
  });

  it("with a log file, appends the lines there, on the ports given, and a probe wait fails fast once it exits", async () => {
    // GIVEN the stand-in launched as npm start does: detached, on a chosen port, logging to a file
    const logFile = path.join(dir, "operator.log");
    const probePort = await freePort();
    const operator = launchOperator({ script: standIn, probePort, logFile, label: "local operator" });
    try {
      // WHEN its /healthz answers
      await waitForProbe(operator, `http://127.0.0.1:${probePort}`, "/healthz", { timeoutMs: 10_000, intervalMs: 20 });
      // THEN its lines are in the file (not in memory), and tail reads them from there
      assert.deepEqual(operator.logs, []);
      assert.match(readFileSync(logFile, "utf8"), /"msg":"operator starting".*"probePort":\d+/);
      assert.match(operator.tail(), /a line that is not JSON/);
    } finally {
      await operator.stop(5_000);
    }
    // AND a wait for a probe of a process that has exited fails at once, naming it
    await assert.rejects(
      waitForProbe(operator, `http://127.0.0.1:${probePort}`, "/readyz", { timeoutMs: 30_000 }),
      /local operator exited before \/readyz answered\nexited: \{"code":0,"signal":null\}/,
    );
  });
});
