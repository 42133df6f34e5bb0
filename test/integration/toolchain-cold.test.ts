/**
 * The toolchain's cold path, as a brand-new machine meets it: every step that does not compile (Go check, cache
 * keys, module downloads, gen-embed, assemble, the lock, prune) runs with GOMODCACHE, GOCACHE and the toolchain
 * cache pointed at empty directories. CI's own caches are always warm, so without this a step that only works
 * with a warm cache (gen-embed once read a module directory that was never downloaded) would stay green here and
 * fail for every new user.
 *
 * It stays offline and quick: the machine's module download cache serves as a read-only file:// proxy (the real
 * proxy is only asked for what that lacks), and the Go build cache starts empty.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../tools/lib/paths.ts";
import { waitFor } from "../support/cluster.ts";

const script = path.join(repoRoot, "tools/toolchain.sh");
const defaultPieces = ["etcd", "kube", "kwok", "pulumi", "pulumi-kubernetes", "helm"];
const binaries = {
  etcd: ["etcd"],
  kube: ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"],
  kwok: ["kwok", "kwokctl"],
  pulumi: ["pulumi", "pulumi-language-nodejs", "pulumi-resource-pulumi-nodejs"],
  "pulumi-kubernetes": ["pulumi-resource-kubernetes"],
  helm: ["helm"],
} as const;
const providerVersion = /^PULUMI_KUBERNETES_VERSION=(.+)$/m.exec(
  readFileSync(path.join(repoRoot, "tools/versions.env"), "utf8"),
)![1]!;

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Empty caches of every kind, and the environment that points Go and the toolchain at them. */
function coldCaches(t: { after: (fn: () => void) => void }) {
  const root = mkdtempSync(path.join(os.tmpdir(), "toolchain-cold-"));
  const dirs = { modCache: path.join(root, "gomod"), goCache: path.join(root, "gocache"), cache: path.join(root, "c") };
  const warm = execFileSync("go", ["env", "GOMODCACHE"], { encoding: "utf8" }).trim();
  const upstream = execFileSync("go", ["env", "GOPROXY"], { encoding: "utf8" }).trim();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GOMODCACHE: dirs.modCache,
    GOCACHE: dirs.goCache,
    MYAPP_CACHE_DIR: dirs.cache,
    GOPROXY: `file://${warm}/cache/download,${upstream}`,
    // go.sum still verifies every module; only the checksum database (network) is not asked.
    GOSUMDB: "off",
  };
  delete env.MYAPP_TOOLCHAIN_BIN; // npm test sets it; here the toolchain must find (or not find) its own pieces
  t.after(() => {
    // Module cache files are read-only by design: Go's own command removes them.
    if (existsSync(dirs.modCache)) execFileSync("go", ["clean", "-modcache"], { env, stdio: "ignore" });
    rmSync(root, { recursive: true, force: true });
  });
  return { dirs, env, toolchainDir: path.join(dirs.cache, "toolchain") };
}

/** Runs tools/toolchain.sh; `stderr()` is what it said so far, `done` its result. */
function toolchainProcess(args: readonly string[], env: NodeJS.ProcessEnv) {
  const child = spawn("bash", [script, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Result>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout: stdout.trim(), stderr }));
  });
  return { stderr: () => stderr, done };
}

function toolchain(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Result> {
  return toolchainProcess(args, env).done;
}

function ok(result: Result, what: string): string {
  assert.equal(result.code, 0, `${what} failed:\n${result.stderr.split("\n").slice(-20).join("\n")}`);
  return result.stdout;
}

/** A piece as a finished build leaves it, with stand-in binaries: what assemble and the lock care about. */
function fakeBuiltPiece(toolchainDir: string, piece: keyof typeof binaries, key: string): string {
  const dir = path.join(toolchainDir, `${piece}-${key}`);
  mkdirSync(path.join(dir, "bin"), { recursive: true });
  for (const name of binaries[piece]) writeFileSync(path.join(dir, "bin", name), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(path.join(dir, ".complete"), "");
  return dir;
}

test("every non-compiling toolchain step works from empty Go and toolchain caches", async (t) => {
  const { dirs, env, toolchainDir } = coldCaches(t);

  await t.test("the Go check passes and names the minimum", async () => {
    const result = await toolchain(["check"], env);
    ok(result, "check");
    assert.match(result.stderr, /needs >= 1\.\d+/);
  });

  const keys = new Map<string, string>();
  await t.test("cache keys read only the checkout: the same with empty caches as with the machine's", async () => {
    const warmEnv = { ...process.env };
    delete warmEnv.MYAPP_TOOLCHAIN_BIN;
    for (const piece of defaultPieces) {
      const cold = ok(await toolchain(["key", piece], env), `key ${piece}`);
      assert.match(cold, /^[0-9a-f]{16}$/);
      assert.equal(cold, ok(await toolchain(["key", piece], warmEnv), `key ${piece} (warm)`), piece);
      keys.set(piece, cold);
    }
  });

  await t.test("a piece's modules download into an empty module cache", async () => {
    const packages = Number(ok(await toolchain(["download", "etcd"], env), "download etcd"));
    assert.ok(packages > 100, `the etcd build has ${packages} packages`);
    assert.ok(
      readdirSync(path.join(dirs.modCache, "go.etcd.io/etcd/server")).some((d) => d.startsWith("v3@")),
      "etcd's server module is in the (formerly empty) module cache",
    );
  });

  await t.test("gen-embed downloads the provider module it reads", async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), "embed-"));
    t.after(() => rmSync(out, { recursive: true, force: true }));
    ok(await toolchain(["gen-embed", out], env), "gen-embed");
    const schema = JSON.parse(readFileSync(path.join(out, "schema-embed.json"), "utf8")) as { version: string };
    assert.equal(schema.version, providerVersion);
    assert.ok(JSON.parse(readFileSync(path.join(out, "terraform-mapping-embed.json"), "utf8")));
  });

  await t.test("an empty toolchain cache is reported as not built, with what to run", async () => {
    const result = await toolchain(["--bin-dir"], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /toolchain not built: run 'npm run toolchain'/);
  });

  await t.test("assemble links every binary of the built pieces into one bin directory", async () => {
    for (const piece of defaultPieces) fakeBuiltPiece(toolchainDir, piece as keyof typeof binaries, keys.get(piece)!);
    const binDir = ok(await toolchain(["assemble"], env), "assemble");
    assert.equal(ok(await toolchain(["--bin-dir"], env), "--bin-dir"), binDir);
    const names = Object.values(binaries).flat().sort();
    assert.deepEqual(readdirSync(binDir).sort(), names);
    for (const name of names) {
      assert.ok(realpathSync(path.join(binDir, name)).startsWith(toolchainDir), `${name} resolves into the cache`);
    }
  });
});

test("a build in progress is named, waited for (each piece built once) and never pruned", async (t) => {
  const { env, toolchainDir } = coldCaches(t);
  mkdirSync(toolchainDir, { recursive: true });
  const etcdKey = ok(await toolchain(["key", "etcd"], env), "key etcd");

  // Another build (another checkout, say) holds the cache lock while it builds etcd.
  // (bash takes the lock, then becomes `sleep`: the process that holds the lock is the one the test kills.)
  const lockFile = path.join(toolchainDir, ".lock");
  const other = spawn("bash", ["-c", 'exec 9>>"$1" && flock 9 && exec sleep 600', "_", lockFile], { stdio: "ignore" });
  const otherExited = new Promise((resolve) => other.on("exit", resolve));
  t.after(() => other.kill("SIGKILL"));
  writeFileSync(path.join(toolchainDir, ".lock.holder"), `${other.pid} etcd ${Math.floor(Date.now() / 1000)} /x\n`);
  await waitFor("the other build to hold the lock", async () => {
    const r = await toolchain(["--bin-dir"], env);
    return /a build is in progress, pid \d+ \(building etcd/.test(r.stderr) ? r : undefined;
  });

  const waiting = toolchainProcess(["build", "etcd"], env);
  await waitFor("the second build to wait for the lock", async () =>
    waiting.stderr().includes("waiting for the build already running") ? true : undefined,
  );
  const dead = path.join(toolchainDir, `etcd-old.tmp.${2 ** 22 + 1}`); // above pid_max's default: never running
  mkdirSync(dead);
  const inProgress = path.join(toolchainDir, `etcd-${etcdKey}.tmp.${other.pid}`);
  mkdirSync(inProgress);

  // The other build finishes etcd and releases the lock; the waiting one finds it built and compiles nothing.
  fakeBuiltPiece(toolchainDir, "etcd", etcdKey);
  other.kill("SIGTERM");
  await otherExited;
  const result = await waiting.done;
  ok(result, "build etcd");
  assert.match(
    result.stderr,
    new RegExp(`waiting for the build already running in this cache: pid ${other.pid} \\(building etcd`),
  );
  assert.match(result.stderr, /etcd: cached/);
  assert.doesNotMatch(result.stderr, /etcd: compiling/);
  assert.equal(result.stdout, path.join(toolchainDir, `etcd-${etcdKey}`, "bin"));

  // prune keeps what is pinned and a directory whose process still runs, and drops a dead build's leftovers.
  const keeper = spawn("sleep", ["600"], { stdio: "ignore" });
  t.after(() => keeper.kill("SIGKILL"));
  const live = path.join(toolchainDir, `etcd-${etcdKey}.tmp.${keeper.pid}`);
  mkdirSync(live);
  ok(await toolchain(["prune"], env), "prune");
  assert.ok(existsSync(live), "a running build's directory stays");
  assert.ok(existsSync(path.join(toolchainDir, `etcd-${etcdKey}`)), "the pinned piece stays");
  assert.ok(!existsSync(dead), "a dead build's directory goes");
  assert.ok(!existsSync(inProgress), "the finished build's pid is gone, so is its directory");
});
