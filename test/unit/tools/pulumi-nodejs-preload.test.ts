/**
 * The toolchain's dynamic-provider launcher (tools/bin/pulumi-resource-pulumi-nodejs) starts @pulumi/pulumi's host
 * without loading what the host never uses (TypeScript, npm's arborist and normalize-package-data, the Automation
 * API), and each of them still loads, and works, at its first use. Proven on the real host started by the real launcher (through a
 * symlink, as a PATH entry may be): a probe required into it looks at its module cache once the host has printed
 * its port, then uses each deferred module as @pulumi/pulumi's code does.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../../tools/lib/paths.ts";

// Runs inside the host (plain CommonJS: it is required by the host's node). Acts only there, not in the
// launcher's `node -e` that resolves the host.
const probe = String.raw`
const host = process.argv[1] ?? "";
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
    };
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
      }) + "\n");
      process.exit(0);
    }, (error) => { process.stderr.write("PROBE-FAILED " + error.stack + "\n"); process.exit(1); });
    return write.apply(this, args);
  };
}
`;

test("the launcher's host starts without TypeScript and arborist, and loads each at its first use", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "nodejs-preload-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, "probe.cjs"), probe);
  const launcher = path.join(dir, "pulumi-resource-pulumi-nodejs");
  symlinkSync(path.join(repoRoot, "tools/bin/pulumi-resource-pulumi-nodejs"), launcher);

  // GIVEN the launcher started as the engine starts it (from the program's directory, node on PATH)
  const host = spawn(launcher, ["127.0.0.1:1"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PATH: [path.dirname(process.execPath), process.env.PATH].join(path.delimiter),
      NODE_OPTIONS: `--require ${path.join(dir, "probe.cjs")}`,
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
  assert.equal(report.arborist, "function");
  assert.equal(report.normalized, "probe@1.0.0");
  assert.equal(report.automation, "function");
  assert.equal(report.serialized, true);
  assert.equal(report.typescriptLoaded, true);
  assert.equal(code, 0);
});
