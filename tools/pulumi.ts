/**
 * `npm run pulumi -- ARGS`: the built pulumi CLI, offline: local file backend and private plugin home under
 * .local/, a development passphrase unless PULUMI_CONFIG_PASSPHRASE is set, no update checks or plugin downloads,
 * and a temporary directory of its own, removed when it ends (tools/lib/private-tmp.ts says why).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { privateTmp } from "./lib/private-tmp.ts";
import { ensurePulumiHome } from "./lib/pulumi.ts";
import { repoRoot, toolchainBinDir } from "./lib/paths.ts";

try {
  const binDir = toolchainBinDir();
  const env = { ...(await ensurePulumiHome(binDir)), ...privateTmp("myapp-pulumi").env };
  const child = spawn(path.join(binDir, "pulumi"), process.argv.slice(2), { env, stdio: "inherit", cwd: repoRoot });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
