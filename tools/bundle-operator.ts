/**
 * `npm run bundle`: the operator as one file, build/operator/myapp-operator.mjs (run it with
 * `node build/operator/myapp-operator.mjs [flags]`; the same flags as operator/main.ts), and the YAML parsing
 * thread's module beside it. The image ships these files.
 */
import path from "node:path";
import { bundleOperator } from "./lib/operator-bundle.ts";
import { repoRoot } from "./lib/paths.ts";
import { progress } from "./lib/progress.ts";

const step = progress("bundle");
step("esbuild: operator/main.ts → one ES module for Node 24");
const bundle = await bundleOperator();
step(
  `${path.relative(repoRoot, bundle.file)}: ${(bundle.bytes / 1024 / 1024).toFixed(1)} MiB, ` +
    `${bundle.packages.length} packages, sha256 ${bundle.sha256.slice(0, 12)}`,
);
