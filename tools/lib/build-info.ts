/**
 * The commit a build names (build/build-info.json, which `myapp-operator --version` prints beside the version,
 * operator/version.ts): every build of one version packs to the same tarball name, and this tells them apart.
 */
import { execFileSync } from "node:child_process";
import { realpathSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The file in build/ that names the build (operator/version.ts reads it). */
export const buildInfoFile = "build-info.json";

/**
 * The commit `root` is a git checkout of: its short hash, with `+dirty` when files differ from it (changed,
 * staged or untracked ones); undefined when `root` is not the top of a git work tree (a source tarball, a
 * directory inside another repository) or git is missing. Reads only, taking no lock of the repository.
 */
export function buildCommit(root: string): string | undefined {
  const git = (args: readonly string[]) =>
    execFileSync("git", ["--no-optional-locks", ...args], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  try {
    if (realpathSync(git(["rev-parse", "--show-toplevel"])) !== realpathSync(root)) return undefined;
    const commit = git(["rev-parse", "--short", "HEAD"]);
    return git(["status", "--porcelain"]) === "" ? commit : `${commit}+dirty`;
  } catch {
    return undefined;
  }
}

/** Writes build/build-info.json when the build has a commit to name; returns it. */
export function writeBuildInfo(out: string, root: string): string | undefined {
  const commit = buildCommit(root);
  if (commit !== undefined) writeFileSync(path.join(out, buildInfoFile), `${JSON.stringify({ commit })}\n`);
  return commit;
}
