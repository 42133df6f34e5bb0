/**
 * The operator's version: the version of the myapp-platform package it ships in, for `myapp-operator --version`.
 *
 * Read at run time from the package's own package.json, found by walking up from this module: that is
 * operator/version.ts → package.json in a checkout, and build/operator/version.js → package.json in the installed
 * tarball (npm always packs package.json), so the number printed is by construction the one npm installed. The
 * one place without a package.json is the single-file bundle of the image (tools/lib/operator-bundle.ts): esbuild
 * embeds the version there as the constant below. Embedding it for the tarball too (in tools/build.ts) would need
 * tsc to rewrite code, which it does not, or a generated source file that a checkout's `node operator/main.ts`
 * would find missing or stale.
 *
 * Every build of one version packs to the same tarball name, so `--version` also names the build where it is
 * known: the commit tools/build.ts records in build/build-info.json, read beside the compiled code.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The npm package the operator ships in. */
export const packageName = "myapp-platform";

/** The bundle's embedded version: esbuild's `define` replaces this name; elsewhere it is no global at all. */
declare const MYAPP_PLATFORM_VERSION: string | undefined;

/** The name esbuild's `define` gives the version in the bundle (see {@link operatorVersion}). */
export const versionConstant = "MYAPP_PLATFORM_VERSION";

/** The version of the running operator: embedded in the bundle, else from the package's package.json. */
export function operatorVersion(): string {
  if (typeof MYAPP_PLATFORM_VERSION === "string") return MYAPP_PLATFORM_VERSION;
  return packageVersion(import.meta.url);
}

/**
 * The version in the nearest package.json named {@link packageName} at or above the module `url`; another
 * package's manifest on the way (a project that installed this one) is skipped.
 *
 * @throws Error naming `url` when there is none.
 */
export function packageVersion(url: string): string {
  let dir = path.dirname(fileURLToPath(url));
  for (;;) {
    const file = path.join(dir, "package.json");
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
      if (manifest.name === packageName && typeof manifest.version === "string") return manifest.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json of ${packageName} at or above ${fileURLToPath(url)}`);
    dir = parent;
  }
}

/** The file tools/build.ts writes into build/ to name the commit it built (its own constant, the same name). */
export const buildInfoFile = "build-info.json";

/**
 * The commit the running code was built from, as tools/build.ts records it (a short hash, `+dirty` when the
 * checkout had changes), read from {@link buildInfoFile} one directory above the module `url`:
 * build/operator/version.js → build/build-info.json. Undefined where there is none or it is no such record: the
 * sources of a checkout (operator/version.ts → the repository root, where nothing writes it), a package built
 * outside git, the image's bundle.
 */
export function buildCommit(url: string = import.meta.url): string | undefined {
  try {
    const info = JSON.parse(readFileSync(new URL(`../${buildInfoFile}`, url), "utf8")) as { commit?: unknown };
    return typeof info.commit === "string" && /^[0-9a-f]{4,64}(\+dirty)?$/.test(info.commit) ? info.commit : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What `myapp-operator --version` prints after the name: `0.2.0 (build 84458a1)`, or the version alone. The
 * bundle names no build: beside it in a checkout's build/ a build-info.json may be another build's.
 */
export function versionLine(
  version: string = operatorVersion(),
  commit: string | undefined = typeof MYAPP_PLATFORM_VERSION === "string" ? undefined : buildCommit(),
): string {
  return commit === undefined ? version : `${version} (build ${commit})`;
}
