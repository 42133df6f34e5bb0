/**
 * `npm test`: the whole suite against real parts. Builds or finds the toolchain, starts the local cluster unless
 * it is already up (and stops it again afterwards if it started it), registers the pulumi plugins, then runs
 * node's test runner over test/unit, test/integration and test/e2e (or the paths given as arguments).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { clusterDown, clusterStatus, clusterUp } from "./lib/cluster.ts";
import { endOnUncaughtFailure } from "./lib/command-failure.ts";
import { kubeconfigPath, localDir, repoRoot } from "./lib/paths.ts";
import { privateTmp, summarizeLeftovers } from "./lib/private-tmp.ts";
import { progress } from "./lib/progress.ts";
import { prepareToolchain } from "./lib/toolchain.ts";
import { run } from "./lib/run.ts";
import { splitTestArguments } from "./lib/test-arguments.ts";

const step = progress("test");
endOnUncaughtFailure("npm test");
// Runner options (`--test-name-pattern=X` or `--test-name-pattern X`) go before the files, wherever they were given;
// options alone select within the whole suite.
const { runnerOptions, paths } = splitTestArguments(process.argv.slice(2));
const files =
  paths.length > 0 ? paths : ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts", "test/e2e/**/*.test.ts"];

step("toolchain: building what is missing from the cache");
const { binDir, env } = await prepareToolchain();

// Typecheck and lint are part of the suite (a red typecheck is a red build); they run first, the tests run anyway.
let staticChecksFailed = false;
if (runnerOptions.length === 0 && paths.length === 0) {
  for (const [name, cmd, args] of [
    ["typecheck", "tsc", ["-p", "tsconfig.json"]],
    ["lint", "eslint", ["."]],
    ["format", "prettier", ["--check", "."]],
    ["build", "node", ["tools/build.ts"]],
  ] as const) {
    step(name);
    try {
      await run(path.join(repoRoot, "node_modules/.bin", cmd), args, { cwd: repoRoot });
    } catch (error) {
      console.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
      staticChecksFailed = true;
    }
  }
}

const startedCluster = !(await clusterStatus()).healthy;
if (startedCluster) await clusterUp();
else step("using the local cluster that is already up (it stays up)");

// The suite's own temporary directory: what a test, a tool or a third-party plugin leaves there goes with the run.
// (TMPDIR alone: NODE_COMPILE_CACHE would turn Node's code cache on in every process the tests start.)
const tmp = privateTmp("myapp-test-run");
const tapFile = path.join(localDir, "test-results.tap");
let exitCode = 1;
try {
  step(`running: node --test ${[...runnerOptions, ...files].join(" ")}`);
  exitCode = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "--test",
        "--test-timeout=900000",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        "--test-reporter=tap",
        `--test-reporter-destination=${tapFile}`,
        ...runnerOptions,
        ...files,
      ],
      {
        cwd: repoRoot,
        env: { ...env, KUBECONFIG: kubeconfigPath, MYAPP_TOOLCHAIN_BIN: binDir, TMPDIR: tmp.dir },
        stdio: "inherit",
      },
    );
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
    child.on("close", (code) => resolve(code ?? 1));
  });
} finally {
  const left = tmp.remove();
  if (left.length) step(`removed what the run left in its temporary directory: ${summarizeLeftovers(left)}`);
  if (startedCluster) {
    step("stopping the cluster this run started");
    await clusterDown();
  }
}
if (staticChecksFailed) exitCode ||= 1;

// The closing line CI reads: the runner's totals, after the cluster teardown's own output.
const tap = existsSync(tapFile) ? readFileSync(tapFile, "utf8") : "";
const count = (key: string) => Number(new RegExp(`^# ${key} (\\d+)$`, "m").exec(tap)?.[1] ?? 0);
console.log(`${count("pass")} passed, ${count("fail")} failed, ${count("skipped") + count("todo")} skipped`);
process.exit(exitCode);
