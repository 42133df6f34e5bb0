/**
 * The oldest Node a user's own project may run on, as the README's project says it (`engines.node` of its
 * package.json), fetched from the npm registry: the `node-<platform>-<arch>` package that the `node` package this
 * repository installs is made of. Kept in the cache outside the repository (MYAPP_CACHE_DIR, as the toolchain's),
 * so the package test can run the README's project on it as well as on this repository's Node: the README's
 * minimum is then a fact, not a hope.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * The version a `>=MAJOR.MINOR[.PATCH]` engines range starts at, in full (`>=22.19` → `22.19.0`). Any other kind of
 * range has no single oldest version to test, and is an error.
 */
export function oldestVersionOf(range: string): string {
  const match = /^>=\s*(\d+)\.(\d+)(?:\.(\d+))?$/.exec(range.trim());
  if (!match)
    throw new Error(`engines.node "${range}": expected ">=MAJOR.MINOR[.PATCH]", whose oldest version is tested`);
  return `${match[1]}.${match[2]}.${match[3] ?? "0"}`;
}

/** The `engines.node` range of a package.json's text. */
export function enginesNodeOf(packageJson: string): string {
  const range = (JSON.parse(packageJson) as { engines?: { node?: unknown } }).engines?.node;
  if (typeof range !== "string") throw new Error("package.json has no engines.node");
  return range;
}

/** The directory holding `node` of that exact version: from the cache, else fetched into it first. */
export async function nodeBinDir(version: string): Promise<string> {
  const cache = path.join(
    process.env.MYAPP_CACHE_DIR ??
      path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "myapp-platform"),
    "node",
  );
  const dir = path.join(cache, `node-v${version}-${process.platform}-${process.arch}`);
  const bin = path.join(dir, "bin");
  if (!existsSync(path.join(bin, "node"))) {
    mkdirSync(cache, { recursive: true });
    // Unpacked beside its final place and renamed into it, so a fetch cut short never looks like a cached Node.
    const scratch = mkdtempSync(path.join(cache, ".fetch-"));
    try {
      const spec = `node-${process.platform}-${process.arch}@${version}`;
      const { stdout } = await run("npm", ["pack", spec, "--pack-destination", scratch, "--silent"], {
        cwd: scratch,
      });
      const tarball = path.join(scratch, stdout.trim().split("\n").at(-1) ?? "");
      await run("tar", ["-xzf", tarball, "-C", scratch]);
      if (!existsSync(dir)) renameSync(path.join(scratch, "package"), dir);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  const { stdout } = await run(path.join(bin, "node"), ["--version"]);
  if (stdout.trim() !== `v${version}`) throw new Error(`${bin}/node is ${stdout.trim()}, not v${version}`);
  return bin;
}
