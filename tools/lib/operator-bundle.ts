/**
 * The operator as one self-contained ES module: esbuild bundles operator/main.ts and everything it imports
 * (pino, prom-client, undici, yaml, zod, ...) into build/operator/myapp-operator.mjs, so the image ships
 * Node plus that file and no node_modules; nothing of Pulumi is reachable from operator/main.ts, so none is in it.
 * Beside it: the YAML parsing thread's module (chart/render-yaml-thread.ts, self-contained too), and
 * THIRD_PARTY_LICENSES.txt with the license of every bundled package.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { build, type Metafile } from "esbuild";
import { versionConstant } from "../../operator/version.ts";
import { repoRoot } from "./paths.ts";
import { byCodeUnits } from "../../api/code-unit-order.ts";
import { parseWorkerName } from "../../chart/render-yaml-thread.ts";

export const operatorBundleDir = path.join(repoRoot, "build/operator");
export const operatorBundleName = "myapp-operator.mjs";
export const licensesName = "THIRD_PARTY_LICENSES.txt";

export interface OperatorBundle {
  /** Absolute path of the bundle. */
  readonly file: string;
  /** Absolute path of the YAML parsing thread's module beside it (chart/render-yaml-worker.ts bundled). */
  readonly parseWorker: string;
  /** Absolute path of the license file next to it. */
  readonly licenses: string;
  /** Absolute path of the helm binary next to it: the chart engine the operator runs (`helm template`). */
  readonly helm: string;
  readonly bytes: number;
  /** sha256 of the bundle and the license file: what an image built from them is keyed by. */
  readonly sha256: string;
  /** Bundled npm packages, `name@version`. */
  readonly packages: readonly string[];
}

/**
 * Bundles operator/main.ts. The output is ESM for Node 24; CommonJS dependencies that call `require()` on Node's
 * built-ins get a real `require` from `createRequire` (esbuild's ESM shim would throw "Dynamic require of ... is not
 * supported"). Nothing is left external, and nothing needs to be:
 * - pino logs to stdout without transports, so no worker thread file is looked up at runtime (a `transport` option
 *   would need pino's workers next to the bundle: add them as extra entry points then);
 * - prom-client's `@opentelemetry/api` is an ordinary dependency and is bundled;
 * - ws's optional native helpers (bufferutil, utf-8-validate) are required inside try/catch and fall back to the
 *   JavaScript code paths, exactly as without a bundle; esbuild leaves those requires to the real `require`.
 * The unit test runs the bundle from a directory with no node_modules to prove it.
 */
export async function bundleOperator(outDir = operatorBundleDir): Promise<OperatorBundle> {
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, operatorBundleName);
  const parseWorker = path.join(outDir, `${parseWorkerName}.mjs`);
  const result = await build({
    absWorkingDir: repoRoot,
    // The thread's module is found beside the module that starts it, under its extension (parseWorkerUrl).
    entryPoints: [
      { in: "operator/main.ts", out: path.basename(operatorBundleName, ".mjs") },
      { in: `chart/${parseWorkerName}.ts`, out: parseWorkerName },
    ],
    outdir: outDir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    target: "node24",
    format: "esm",
    // Readable stack traces in the operator's logs are worth more than the ~40% minification would save.
    minify: false,
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
    // The image has no package.json beside the bundle: `--version` reads the version embedded here.
    define: versionDefine(),
    banner: {
      js: [
        "// myapp-operator: an entry point (operator/main.ts, chart/render-yaml-worker.ts) and its dependencies,",
        "// bundled by tools/bundle-operator.ts.",
        'import { createRequire as __myappCreateRequire } from "node:module";',
        "const require = __myappCreateRequire(import.meta.url);",
      ].join("\n"),
    },
  });
  asciiOnly(file);
  asciiOnly(parseWorker);
  const pulumi = Object.keys(result.metafile.inputs).filter((input) => input.includes("node_modules/@pulumi/"));
  if (pulumi.length > 0) throw new Error(`the operator bundle must not contain @pulumi/*, but has ${pulumi[0]}`);
  const packages = bundledPackages(result.metafile);
  const licenses = path.join(outDir, licensesName);
  writeFileSync(licenses, licenseText(packages));
  const helm = path.join(outDir, "helm");
  copyFileSync(toolchainHelm(), helm);
  chmodSync(helm, 0o755);
  const hash = createHash("sha256")
    .update(readFileSync(file))
    .update(readFileSync(parseWorker))
    .update(readFileSync(licenses))
    .update(readFileSync(helm));
  return {
    file,
    parseWorker,
    licenses,
    helm,
    bytes: readFileSync(file).byteLength,
    sha256: hash.digest("hex"),
    packages: packages.map((p) => `${p.name}@${p.version}`),
  };
}

/** esbuild's `define` that embeds package.json's version as the operator's (operator/version.ts). */
export function versionDefine(): Record<string, string> {
  const { version } = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string };
  return { [versionConstant]: JSON.stringify(version) };
}

interface BundledPackage {
  readonly name: string;
  readonly version: string;
  readonly license: string;
  readonly dir: string;
}

/** The npm packages whose files esbuild put into the bundle (from its metafile), sorted by name. */
function bundledPackages(metafile: Metafile): BundledPackage[] {
  const dirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) dirs.add(match[1]!);
  }
  return [...dirs]
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(path.join(repoRoot, dir, "package.json"), "utf8")) as {
        name: string;
        version: string;
        license?: string;
      };
      return { name: manifest.name, version: manifest.version, license: manifest.license ?? "UNKNOWN", dir };
    })
    .sort((a, b) => byCodeUnits(a.name, b.name));
}

/** Every bundled package with its license file's text (or its declared license when it ships none). */
function licenseText(packages: readonly BundledPackage[]): string {
  const sections = packages.map((p) => {
    const dir = path.join(repoRoot, p.dir);
    const file = existsSync(dir) ? readdirSync(dir).find((name) => /^(licen[cs]e|copying)/i.test(name)) : undefined;
    const text = file ? readFileSync(path.join(dir, file), "utf8").trim() : `License: ${p.license}`;
    return `${p.name}@${p.version} (${p.license})\n\n${text}`;
  });
  const rule = `\n\n${"-".repeat(78)}\n\n`;
  return `Third-party packages bundled into ${operatorBundleName}\n${rule}${sections.join(rule)}\n`;
}

/** The toolchain's helm (MYAPP_TOOLCHAIN_BIN's, else the helm piece, built when missing). */
function toolchainHelm(): string {
  const given = process.env["MYAPP_TOOLCHAIN_BIN"];
  if (given && existsSync(path.join(given, "helm"))) return path.join(given, "helm");
  const out = execFileSync("bash", [path.join(repoRoot, "tools/toolchain.sh"), "build", "helm"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return path.join(out.trim().split("\n").at(-1) ?? "", "helm");
}

/**
 * Rewrites the bundle's non-ASCII characters as `\u{…}` text. esbuild escapes them in code (its default charset is
 * ASCII) but copies comments as written, and one "’" in a dependency's comment makes V8 keep the whole ~4 MB
 * source as a two-byte string: ~4 MB more of the operator's memory for as long as it runs. What is left is in
 * comments only, where the rewrite changes nothing that runs.
 */
function asciiOnly(file: string): void {
  const source = readFileSync(file, "utf8");
  const ascii = source.replace(/[^\x00-\x7f]/gu, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
  if (ascii !== source) writeFileSync(file, ascii);
}
