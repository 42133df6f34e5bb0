/**
 * `npm run build`: the package users install, in build/. tsc emits JavaScript and declarations (relative `.ts`
 * imports rewritten to `.js`, see tsconfig.build.json); the generated CRD is copied to the same place relative to
 * the code that reads it (api/crd-path.ts), so an installed package finds it inside itself, never in a checkout.
 * The provider's implementation is also bundled into one module there (tools/lib/provider-bundle.ts).
 */
import { chmodSync, cpSync, rmSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./lib/paths.ts";
import { progress } from "./lib/progress.ts";
import { bundleProviderImpl } from "./lib/provider-bundle.ts";
import { run } from "./lib/run.ts";

const step = progress("build");
const out = path.join(repoRoot, "build");

step("tsc -p tsconfig.build.json → build/");
rmSync(out, { recursive: true, force: true });
await run(path.join(repoRoot, "node_modules/.bin/tsc"), ["-p", "tsconfig.build.json"], { cwd: repoRoot });
cpSync(path.join(repoRoot, "config/crd"), path.join(out, "config/crd"), { recursive: true });
// The `myapp-operator` bin: npm links it with the mode it has in the tarball.
chmodSync(path.join(out, "operator/main.js"), 0o755);
step("esbuild: build/provider/impl.js → one module, the dynamic-provider host's first load");
const bundle = await bundleProviderImpl(out);
step(`${path.relative(repoRoot, bundle.file)}: ${(bundle.bytes / 1024 / 1024).toFixed(1)} MiB`);
step("done");
