/** The toolchain, ready to use: built where the cache lacks a piece, the pulumi plugins registered. */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { repoRoot, toolchainBinDir } from "./paths.ts";
import { ensurePulumiHome } from "./pulumi.ts";

function toolchainScript(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [path.join(repoRoot, "tools/toolchain.sh"), ...args], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    child.on("error", reject);
    child.on("close", (code) => resolve(code ?? 1));
  });
}

/**
 * Checks Go first (a missing or old Go is said up front, with what to install), then runs tools/toolchain.sh
 * (its progress goes to stderr; it waits for a build another checkout is running in the same cache) and returns
 * the bin directory and the tools' env. MYAPP_TOOLCHAIN_BIN skips both: the binaries are the user's own.
 */
export async function prepareToolchain(): Promise<{ binDir: string; env: NodeJS.ProcessEnv }> {
  if (!process.env.MYAPP_TOOLCHAIN_BIN) {
    if ((await toolchainScript(["check"])) !== 0) throw new Error("Go is needed to build the toolchain (see above)");
    const code = await toolchainScript(["build"]);
    if (code !== 0) throw new Error(`toolchain build failed (exit ${code}); the lines above say which piece and why`);
  }
  const binDir = toolchainBinDir();
  return { binDir, env: await ensurePulumiHome(binDir) };
}

/**
 * The toolchain's helm if it is built (MYAPP_TOOLCHAIN_BIN's, else the cached helm piece), without building it:
 * the pinned, tested version, for an operator started from this checkout (`npm start`, `npm run operator`).
 */
export function builtHelm(): string | undefined {
  const given = process.env.MYAPP_TOOLCHAIN_BIN;
  if (given) return existsSync(path.join(given, "helm")) ? path.join(given, "helm") : undefined;
  try {
    const dir = execFileSync("bash", [path.join(repoRoot, "tools/toolchain.sh"), "bin-dir", "helm"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return dir && existsSync(path.join(dir, "helm")) ? path.join(dir, "helm") : undefined;
  } catch {
    return undefined;
  }
}
