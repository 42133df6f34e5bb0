/** The toolchain, ready to use: built where the cache lacks a piece, the pulumi plugins registered. */
import { spawn } from "node:child_process";
import path from "node:path";
import { repoRoot, toolchainBinDir } from "./paths.ts";
import { ensurePulumiHome } from "./pulumi.ts";

/** Runs tools/toolchain.sh (its progress goes to stderr), then returns the bin directory and the tools' env. */
export async function prepareToolchain(): Promise<{ binDir: string; env: NodeJS.ProcessEnv }> {
  await new Promise<void>((resolve, reject) => {
    const build = spawn("bash", [path.join(repoRoot, "tools/toolchain.sh")], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    build.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`toolchain build failed (exit ${code})`))));
  });
  const binDir = toolchainBinDir();
  return { binDir, env: await ensurePulumiHome(binDir) };
}
