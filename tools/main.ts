/**
 * `npm start`: the main job. Builds (or finds) the toolchain, starts the local cluster, and prints where things
 * are. Running it again is safe and fast.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { clusterUp } from "./lib/cluster.ts";
import { kubeconfigPath, repoRoot, toolchainBinDir } from "./lib/paths.ts";
import { progress } from "./lib/progress.ts";
import { ensurePulumiHome } from "./lib/pulumi.ts";

const step = progress("start");
step("toolchain (a cold build takes a while; cached builds are skipped)");
await new Promise<void>((resolve, reject) => {
  const build = spawn("bash", [path.join(repoRoot, "tools/toolchain.sh")], { stdio: ["ignore", "ignore", "inherit"] });
  build.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`toolchain build failed (exit ${code})`))));
});
await ensurePulumiHome(toolchainBinDir());
const status = await clusterUp();
step(
  `ready: Kubernetes ${status.serverVersion} with ${status.readyNodes} nodes, kubeconfig ${path.relative(repoRoot, kubeconfigPath)}`,
);
console.log(`
Next:
  npm run kubectl -- get nodes
  npm run pulumi -- version
  npm run cluster -- status
  npm run cluster -- down     # stops everything npm start started
`);
