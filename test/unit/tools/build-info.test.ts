/**
 * The commit tools/build.ts records (tools/lib/build-info.ts) in build/build-info.json, which `myapp-operator --version` prints beside the
 * version: from a git checkout only, `+dirty` when it has changes, nothing anywhere else.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { buildCommit, buildInfoFile, writeBuildInfo } from "../../../tools/lib/build-info.ts";

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "build-info-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** git in `dir`, with an identity of its own and no signing or hooks from this machine's configuration. */
function git(dir: string, ...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", ...args],
    { cwd: dir, encoding: "utf8", env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } },
  ).trim();
}

/** A git repository with one commit of package.json and a .gitignore for build/; returns it and the short hash. */
function checkout(t: TestContext): { dir: string; commit: string } {
  const dir = tempDir(t);
  git(dir, "init", "-q");
  writeFileSync(path.join(dir, "package.json"), "{}\n");
  writeFileSync(path.join(dir, ".gitignore"), "build/\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "first");
  return { dir, commit: git(dir, "rev-parse", "--short", "HEAD") };
}

describe("buildCommit", () => {
  it("is the short hash of a clean checkout", (t) => {
    const { dir, commit } = checkout(t);
    assert.match(commit, /^[0-9a-f]{7,}$/);
    assert.equal(buildCommit(dir), commit);
  });

  it("adds +dirty for a changed, a staged or an untracked file, not for an ignored one", (t) => {
    const { dir, commit } = checkout(t);
    mkdirSync(path.join(dir, "build"));
    writeFileSync(path.join(dir, "build/index.js"), "");
    assert.equal(buildCommit(dir), commit, "build/ is ignored");
    writeFileSync(path.join(dir, "new.ts"), "");
    assert.equal(buildCommit(dir), `${commit}+dirty`);
    git(dir, "add", "new.ts");
    assert.equal(buildCommit(dir), `${commit}+dirty`);
    git(dir, "commit", "-q", "-m", "second");
    assert.equal(buildCommit(dir), git(dir, "rev-parse", "--short", "HEAD"));
    writeFileSync(path.join(dir, "package.json"), '{"changed":true}\n');
    assert.match(buildCommit(dir) ?? "", /^[0-9a-f]{7,}\+dirty$/);
  });

  it("is nothing outside a git checkout, or in a directory inside another repository", (t) => {
    assert.equal(buildCommit(tempDir(t)), undefined);
    const { dir } = checkout(t);
    mkdirSync(path.join(dir, "unpacked"));
    assert.equal(buildCommit(path.join(dir, "unpacked")), undefined);
  });
});

describe("writeBuildInfo", () => {
  it("writes the commit into build/, as operator/version.ts reads it", (t) => {
    const { dir, commit } = checkout(t);
    const out = path.join(dir, "build");
    mkdirSync(out);
    assert.equal(writeBuildInfo(out, dir), commit);
    assert.deepEqual(JSON.parse(readFileSync(path.join(out, buildInfoFile), "utf8")), { commit });
  });

  it("writes nothing where there is no commit to name", (t) => {
    const dir = tempDir(t);
    const out = path.join(dir, "build");
    mkdirSync(out);
    assert.equal(writeBuildInfo(out, dir), undefined);
    assert.equal(existsSync(path.join(out, buildInfoFile)), false);
  });
});
