/**
 * The dynamic provider's implementation as one file in the package, build/provider/impl.bundle.js, which
 * provider/impl-loader.js loads in an installed package. The engine starts a new provider process for every
 * preview, up, refresh and destroy, and its first call waits for the implementation: as tsc's output that is some
 * 250 ES modules (zod alone brings 64 locales), ~130 ms to load with a warm code cache; as one module ~75 ms.
 *
 * Built from tsc's output, so it is the same code as build/provider/impl.js. Its dependencies are the package's
 * own, installed beside it (their license files with them; esbuild keeps their license comments at the end), and
 * anything they `require()` at run time resolves from the package, through a real `require`. Beside it goes the YAML
 * parsing thread's module (chart/render-yaml-thread.ts finds it next to the module that starts it), bundled alike.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { repoRoot } from "./paths.ts";
import { parseWorkerName } from "../../chart/render-yaml-thread.ts";

/** The name provider/impl-loader.js imports. */
const providerBundleName = "impl.bundle.js";

/**
 * Bundles `<buildDir>/provider/impl.js` into `<buildDir>/provider/impl.bundle.js`, and the parsing thread's module
 * beside it; returns the implementation's path and size.
 */
export async function bundleProviderImpl(buildDir: string): Promise<{ file: string; bytes: number }> {
  const file = path.join(buildDir, "provider", providerBundleName);
  await build({
    entryPoints: [
      { in: path.join(buildDir, "provider/impl.js"), out: path.basename(providerBundleName, ".js") },
      { in: path.join(buildDir, `chart/${parseWorkerName}.js`), out: parseWorkerName },
    ],
    outdir: path.dirname(file),
    bundle: true,
    platform: "node",
    target: oldestSupportedNode(),
    format: "esm",
    logLevel: "warning",
    banner: {
      js: [
        "// The MyAppInstance provider's implementation and its dependencies: see tools/lib/provider-bundle.ts.",
        'import { createRequire as __myappCreateRequire } from "node:module";',
        "const require = __myappCreateRequire(import.meta.url);",
      ].join("\n"),
    },
  });
  return { file, bytes: statSync(file).size };
}

/** esbuild's target: the oldest Node the package supports (package.json's `engines.node`, `>=X.Y`), not this one. */
function oldestSupportedNode(): string {
  const manifest = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
    engines?: { node?: string };
  };
  const oldest = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(manifest.engines?.node ?? "")?.[1];
  if (!oldest) throw new Error(`package.json's engines.node must be ">=X.Y" for the provider bundle's target`);
  return `node${oldest}`;
}
