/**
 * The toolchain's dynamic-provider launcher (pulumi-plugin/pulumi-resource-pulumi-nodejs) starts @pulumi/pulumi's host
 * without loading what the host never uses (TypeScript, npm's arborist and normalize-package-data, the Automation
 * API) or uses late (OpenTelemetry's API, semver), and each of them still loads, and works, at its first use; its
 * compiled code is on disk before it serves. Proven on the real host started by the real launcher (through a
 * symlink, as a PATH entry may be): a probe required into it looks at its module cache and Node's compile cache
 * once the host has printed its port, then uses each deferred module as @pulumi/pulumi's code does.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../../tools/lib/paths.ts";

// Runs inside the host (plain CommonJS: it is required by the host's node). Acts only there, not in a `node -e`
// that resolves the host (the launcher's fallback).
const probe = String.raw`
const host = process.argv[1] ?? "";
function compileCacheEntries(dir) {
  const fs = require("node:fs");
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir).reduce((n, version) => n + fs.readdirSync(require("node:path").join(dir, version)).length, 0);
}
if (/cmd[\\/]dynamic-provider/.test(host)) {
  const write = process.stdout.write;
  process.stdout.write = function (...args) {
    process.stdout.write = write;
    const pulumiDir = require("node:path").resolve(host.endsWith(".js") ? require("node:path").dirname(host) : host, "../..");
    const cached = () => Object.keys(require.cache);
    const atStart = {
      typescript: cached().filter((f) => /[\\/]typescript(@[^\\/]+)?[\\/](lib[\\/])?typescript\.js$/.test(f)),
      npmcli: cached().filter((f) => f.includes("@npmcli")),
      normalizePackageData: cached().filter((f) => f.includes("normalize-package-data")),
      automation: cached().filter((f) => /[\\/]automation[\\/]/.test(f)),
      otel: cached().filter((f) => f.includes("@opentelemetry")),
      semver: cached().filter((f) => /[\\/]semver[\\/]/.test(f)),
      compileCache: compileCacheEntries(require("node:path").join(require("node:os").tmpdir(), "node-compile-cache")),
    };
    const otel = require("node:module").createRequire(pulumiDir + "/runtime/settings.js")("@opentelemetry/api");
    const semver = require("node:module").createRequire(pulumiDir + "/runtime/rpc.js")("semver");
    const carrier = {};
    otel.propagation.inject(otel.context.active(), carrier, { set: (c, k, v) => (c[k] = v) }); // as settings.js does
    const versions = semver.gt(new semver.SemVer("1.2.0"), new semver.SemVer("1.1.9")) && semver.eq("1.0.0", "1.0.0");
    const codePaths = require("node:module").createRequire(pulumiDir + "/runtime/closure/codePaths.js");
    const arborist = codePaths("@npmcli/arborist");
    const normalize = codePaths("normalize-package-data");
    const manifest = { name: "probe", version: "1.0.0" };
    (normalize.__esModule ? normalize : { default: normalize }).default(manifest); // as __importDefault does
    require(pulumiDir).runtime.serializeFunction(() => 42).then((serialized) => {
      process.stderr.write("PROBE " + JSON.stringify({
        atStart,
        arborist: typeof arborist.Arborist,
        normalized: manifest._id,
        automation: typeof require(pulumiDir).automation.LocalWorkspace,
        serialized: serialized.text.includes("42"),
        typescriptLoaded: cached().some((f) => /typescript\.js$/.test(f)),
        otelPropagation: typeof otel.propagation.extract,
        versions,
        realModules: { otel: cached().filter((f) => f.includes("@opentelemetry")).length, semver: cached().filter((f) => /[\\/]semver[\\/]/.test(f)).length },
      }) + "\n");
      process.exit(0);
    }, (error) => { process.stderr.write("PROBE-FAILED " + error.stack + "\n"); process.exit(1); });
    return write.apply(this, args);
  };
}
`;

test("the launcher's host starts without TypeScript and arborist, loads each at its first use, and caches its code", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "nodejs-preload-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, "probe.cjs"), probe);
  const launcher = path.join(dir, "pulumi-resource-pulumi-nodejs");
  symlinkSync(path.join(repoRoot, "pulumi-plugin/pulumi-resource-pulumi-nodejs"), launcher);

  // GIVEN the launcher started as the engine starts it (from the program's directory, node on PATH)
  const host = spawn(launcher, ["127.0.0.1:1"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PATH: [path.dirname(process.execPath), process.env.PATH].join(path.delimiter),
      NODE_OPTIONS: `--require ${path.join(dir, "probe.cjs")}`,
      TMPDIR: dir, // where Node keeps its compile cache when NODE_COMPILE_CACHE does not say
      NODE_COMPILE_CACHE: undefined,
      NODE_DISABLE_COMPILE_CACHE: undefined,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => host.kill("SIGKILL"));
  let stderr = "";
  host.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  host.stdout.resume();
  const [code] = await once(host, "exit");

  // THEN it served (printed its port) with none of them loaded, and each works once used
  const line = stderr.split("\n").find((l) => l.startsWith("PROBE "));
  assert.ok(line, `no probe report (exit ${code}): ${stderr}`);
  const report = JSON.parse(line.slice("PROBE ".length));
  assert.deepEqual(report.atStart.typescript, [], "TypeScript was loaded before the host served");
  assert.ok(report.atStart.npmcli.length <= 1, `arborist was loaded: ${report.atStart.npmcli.join(", ")}`);
  assert.ok(report.atStart.normalizePackageData.length <= 1, "normalize-package-data was loaded");
  assert.ok(report.atStart.automation.length <= 1, `the Automation API was loaded: ${report.atStart.automation}`);
  assert.ok(report.atStart.otel.length <= 1, `OpenTelemetry's API was loaded: ${report.atStart.otel.join(", ")}`);
  assert.ok(report.atStart.semver.length <= 1, `semver was loaded: ${report.atStart.semver.join(", ")}`);
  // ... and with its own modules' compiled code written to Node's compile cache (it is ended by a signal later)
  assert.ok(report.atStart.compileCache > 100, `${report.atStart.compileCache} entries in the compile cache`);
  assert.equal(report.arborist, "function");
  assert.equal(report.normalized, "probe@1.0.0");
  assert.equal(report.automation, "function");
  assert.equal(report.serialized, true);
  assert.equal(report.typescriptLoaded, true);
  assert.equal(report.otelPropagation, "function");
  assert.equal(report.versions, true);
  assert.ok(report.realModules.otel > 1 && report.realModules.semver > 1, JSON.stringify(report.realModules));
  assert.equal(code, 0);
});

test("the launcher finds the host from the program's directory without asking a second Node, and asks it elsewhere", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "nodejs-launcher-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A `node` first on PATH that records each start, then runs the real one.
  const shims = path.join(dir, "bin");
  const starts = path.join(dir, "starts.log");
  mkdirSync(shims);
  writeFileSync(path.join(shims, "node"), `#!/bin/sh\necho "$1" >> '${starts}'\nexec '${process.execPath}' "$@"\n`, {
    mode: 0o755,
  });
  const startHost = async (cwd: string, extraEnv: NodeJS.ProcessEnv) => {
    rmSync(starts, { force: true });
    const host = spawn(path.join(repoRoot, "pulumi-plugin/pulumi-resource-pulumi-nodejs"), ["127.0.0.1:1"], {
      cwd,
      env: { ...process.env, PATH: [shims, process.env.PATH].join(path.delimiter), ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    t.after(() => host.kill("SIGKILL"));
    let stderr = "";
    host.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = once(host, "exit").then(([code]) => `exited ${code}: ${stderr}`);
    const served = once(host.stdout.setEncoding("utf8"), "data").then(([chunk]) => String(chunk));
    const first = await Promise.race([served, exited]);
    host.kill("SIGKILL");
    return { port: first.trim(), nodeStarts: readFileSync(starts, "utf8").trim().split("\n") };
  };

  // WHEN the program's directory has @pulumi/pulumi in a node_modules above it: one Node, the host's own
  const inProject = await startHost(path.join(repoRoot, "test"), {});
  assert.match(inProject.port, /^\d+$/, inProject.port);
  assert.deepEqual(inProject.nodeStarts, ["--import"], "the launcher started a Node before the host's");

  // WHEN only NODE_PATH leads to it: Node resolves it, as the upstream launcher does, and the host serves
  const elsewhere = path.join(dir, "elsewhere"); // under the OS temp directory: no node_modules above it
  mkdirSync(elsewhere);
  const outside = await startHost(elsewhere, { NODE_PATH: path.join(repoRoot, "node_modules") });
  assert.match(outside.port, /^\d+$/, outside.port);
  assert.deepEqual(outside.nodeStarts, ["-e", "--import"]);
});
