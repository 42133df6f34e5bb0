/**
 * A project of a user's own, made the way the README's "Your own project" says: its files in a directory of its
 * own, the tarball of `npm pack` (prepack builds the package first) beside them, `npm install`. The e2e test of the
 * package and the benchmark of that project shape (bench/pulumi-project.ts) make theirs with it.
 */
import { execFile } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./paths.ts";

const run = promisify(execFile);

/**
 * Writes `files` (name → text) into `project`, then packs the package next to them: from `source` (a checkout of
 * this repository; the working tree by default).
 */
export async function packedProject(
  project: string,
  files: ReadonlyMap<string, string>,
  env: NodeJS.ProcessEnv,
  source: string = repoRoot,
): Promise<void> {
  mkdirSync(project, { recursive: true });
  for (const [name, text] of files) writeFileSync(path.join(project, name), text);
  await run("npm", ["pack", "--pack-destination", project], { cwd: source, env, maxBuffer: 1 << 26 });
}

/**
 * The committed tree (`git archive HEAD`) in `dir`, with the checkout's node_modules linked in: a source for
 * {@link packedProject} that uncommitted work elsewhere in the checkout can neither break (prepack type-checks
 * everything) nor leak into, and whose build does not replace the checkout's build/ while others use it.
 */
export async function committedSource(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  await run("sh", ["-c", 'git archive --format=tar HEAD | tar -x -C "$1"', "sh", dir], {
    cwd: repoRoot,
    maxBuffer: 1 << 26,
  });
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"));
  return dir;
}

/** `npm install` in `project`, from npm's cache where it can. */
export async function npmInstall(project: string, env: NodeJS.ProcessEnv): Promise<void> {
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: project,
    env,
    maxBuffer: 1 << 26,
  });
}
