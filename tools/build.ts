/**
 * `npm run build`: the package users install, in build/. tsc emits JavaScript and declarations (relative `.ts`
 * imports rewritten to `.js`, see tsconfig.build.json); the generated CRD is copied to the same place relative to
 * the code that reads it (api/crd-path.ts), so an installed package finds it inside itself, never in a checkout.
 * The provider's implementation is also bundled into one module there (tools/lib/provider-bundle.ts). Built from a
 * git checkout, build/build-info.json records the commit, which `myapp-operator --version` prints beside the
 * version (operator/version.ts): every build of one version has the same tarball name, and this tells them apart.
 */
import { chmodSync, cpSync, rmSync } from "node:fs";
import path from "node:path";
import { buildInfoFile, writeBuildInfo } from "./lib/build-info.ts";
import { repoRoot } from "./lib/paths.ts";
import { progress } from "./lib/progress.ts";
import { bundleProviderImpl } from "./lib/provider-bundle.ts";
import { run } from "./lib/run.ts";

async function build(): Promise<void> {
  const step = progress("build");
  const out = path.join(repoRoot, "build");

  step("tsc -p tsconfig.build.json → build/");
  rmSync(out, { recursive: true, force: true });
  await run(path.join(repoRoot, "node_modules/.bin/tsc"), ["-p", "tsconfig.build.json"], { cwd: repoRoot });
  cpSync(path.join(repoRoot, "config/crd"), path.join(out, "config/crd"), { recursive: true });
  // The `myapp-operator` bin: npm links it with the mode it has in the tarball.
  chmodSync(path.join(out, "operator/main.js"), 0o755);
  const commit = writeBuildInfo(out, repoRoot);
  step(commit ? `build/${buildInfoFile}: commit ${commit}` : "not a git checkout: no commit recorded");
  step("esbuild: build/provider/impl.js → one module, the dynamic-provider host's first load");
  const bundle = await bundleProviderImpl(out);
  step(`${path.relative(repoRoot, bundle.file)}: ${(bundle.bytes / 1024 / 1024).toFixed(1)} MiB`);
  step("done");
}

await build();
