/** Where the project keeps its local state, and the environment every tool runs with. */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Git-ignored local state: kubeconfig, kwok workdir, pulumi backend and home, logs, pid files. */
export const localDir = path.join(repoRoot, ".local");
export const kubeconfigPath = path.join(localDir, "kubeconfig");
export const clusterName = "myapp";

/**
 * The toolchain's bin directory, or an error that says how to get it: tools/toolchain.sh's own words, which say
 * whether a build is in progress (its pid, the piece it builds) or none is, and whether Go is missing.
 */
export function toolchainBinDir(): string {
  try {
    return execFileSync("bash", [path.join(repoRoot, "tools/toolchain.sh"), "--bin-dir"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
  } catch (error) {
    const said = String((error as { stderr?: unknown }).stderr ?? "")
      .replace(/^\[toolchain +\d+s\] /gm, "")
      .trim();
    throw new Error(said || "The toolchain is not built yet: run 'npm run toolchain' (a cold build takes a while).");
  }
}

/** Environment for the built tools: toolchain and Node 24 first on PATH, local kubeconfig, private pulumi. */
export function toolEnv(binDir = toolchainBinDir()): NodeJS.ProcessEnv {
  const nodeBin = path.dirname(process.execPath);
  // A passphrase file set for the user's own projects would win over the repository's passphrase.
  const { PULUMI_CONFIG_PASSPHRASE_FILE: _ownProjects, ...ambient } = process.env;
  return {
    ...ambient,
    PATH: [binDir, nodeBin, path.join(repoRoot, "node_modules/.bin"), process.env.PATH].join(path.delimiter),
    KUBECONFIG: kubeconfigPath,
    KWOK_WORKDIR: path.join(localDir, "kwok"),
    ...pulumiEnv(),
  };
}

/** Pulumi without network: local file backend, private plugin home, no update checks or plugin downloads. */
export function pulumiEnv(): Record<string, string> {
  return {
    PULUMI_HOME: path.join(localDir, "pulumi-home"),
    PULUMI_BACKEND_URL: `file://${path.join(localDir, "pulumi-state")}`,
    // The repository's own stacks in .local/ have a passphrase of their own (MYAPP_DEV_PASSPHRASE, default
    // "myapp-dev"): a PULUMI_CONFIG_PASSPHRASE exported for the user's own project (as its README says) would
    // not open them.
    PULUMI_CONFIG_PASSPHRASE: process.env.MYAPP_DEV_PASSPHRASE ?? "myapp-dev",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    // Plugins come from PULUMI_HOME (registered by version) or next to the pulumi binary, never from PATH.
    PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
  };
}
