/** The built pulumi CLI, set up for offline use with a project-private PULUMI_HOME. */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pulumiEnv, repoRoot, toolEnv, toolchainBinDir } from "./paths.ts";
import { run } from "./run.ts";
import { removeStaleLocks } from "./stale-pulumi-locks.ts";

/** The kubernetes plugin version: the one @pulumi/kubernetes asks for (they must match exactly). */
export function kubernetesPluginVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, "node_modules/@pulumi/kubernetes/package.json"), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/**
 * Registers the built kubernetes plugin in PULUMI_HOME (`pulumi plugin install --file`) unless it is there, and
 * removes the locks a killed pulumi left in the project's backend (stale-pulumi-locks.ts).
 * The language host and dynamic-provider launcher are found next to the pulumi binary and need no install.
 */
export async function ensurePulumiHome(binDir = toolchainBinDir()): Promise<NodeJS.ProcessEnv> {
  const env = toolEnv(binDir);
  const backendDir = new URL(pulumiEnv().PULUMI_BACKEND_URL!).pathname;
  mkdirSync(backendDir, { recursive: true });
  for (const { stack, pid } of removeStaleLocks(backendDir)) {
    console.error(`removed the lock of stack ${stack} left by pulumi pid ${pid}, which no longer runs`);
  }
  const version = kubernetesPluginVersion();
  const pluginDir = path.join(pulumiEnv().PULUMI_HOME!, "plugins", `resource-kubernetes-v${version}`);
  if (!existsSync(path.join(pluginDir, "pulumi-resource-kubernetes"))) {
    await run(
      path.join(binDir, "pulumi"),
      [
        "plugin",
        "install",
        "resource",
        "kubernetes",
        version,
        "--file",
        path.join(binDir, "pulumi-resource-kubernetes"),
      ],
      { env },
    );
  }
  return env;
}

/**
 * Removes `stack` and its state, keeping its config file: for a state whose objects are gone with their cluster
 * (dev-stack-cluster.ts), which no destroy can reach. A stack that does not exist is already forgotten.
 */
export async function forgetStack(pulumi: string, stack: string, env: NodeJS.ProcessEnv): Promise<void> {
  const args = ["stack", "rm", stack, "--force", "--yes", "--non-interactive", "--preserve-config"];
  await run(pulumi, args, { env, cwd: repoRoot }).catch((error: unknown) => {
    if (!/no stack named/i.test(String(error))) throw error;
  });
}
