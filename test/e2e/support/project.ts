/**
 * Pulumi projects of the e2e tests that stand where a user's would: in their own directory, run by the built CLI
 * (Automation API, offline: the local file backend and private plugin home of tools/lib/paths.ts).
 */
import { LocalWorkspace, PulumiCommand, type Stack } from "@pulumi/pulumi/automation/index.js";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { TestContext } from "node:test";
import { pulumiEnv, toolchainBinDir } from "../../../tools/lib/paths.ts";

export const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();

/**
 * The built CLI, found on PATH with a Node for the language host and the dynamic-provider launcher: this process's
 * own (Node 24) unless `nodeDir` names another.
 */
export function toolPath(nodeDir = path.dirname(process.execPath)): string {
  return [binDir, nodeDir, process.env.PATH].join(path.delimiter);
}

/**
 * A new stack of the project in `workDir`, with the given environment on top of the offline pulumi one. The
 * caller destroys it (`destroyStack`), so it controls the order of cleanups.
 */
export async function projectStack(workDir: string, env: Record<string, string> = {}): Promise<Stack> {
  process.env.PATH = toolPath();
  const pulumiCommand = await PulumiCommand.get({ skipVersionCheck: true });
  const envVars = { ...pulumiEnv(), KUBECONFIG: process.env.KUBECONFIG ?? "", PATH: toolPath(), ...env };
  const stackName = `e2e-${randomBytes(3).toString("hex")}`;
  return LocalWorkspace.createOrSelectStack({ stackName, workDir }, { pulumiCommand, envVars });
}

/**
 * Pulumi as the README's user has it, nothing of this repository's: a home of their own (`~/.pulumi`, empty),
 * plugins found beside the CLI on PATH, the cluster from an exported KUBECONFIG and a passphrase of their own. Set
 * to "" is unset to the CLI: the test run's own PULUMI_* (a private plugin home where the kubernetes plugin is
 * registered, ambient plugins ignored) must not reach it. (PULUMI_HOME is named: the CLI finds `~` by the account's
 * entry, not HOME, and the machine's own ~/.pulumi is not the test's to write.)
 */
export function userPulumiEnv(home: string, kubeconfig: string, nodeDir?: string): Record<string, string> {
  return {
    ...Object.fromEntries(Object.keys(pulumiEnv()).map((name) => [name, ""])),
    HOME: home,
    PULUMI_HOME: path.join(home, ".pulumi"),
    KUBECONFIG: kubeconfig,
    PULUMI_CONFIG_PASSPHRASE: "the shop project's passphrase",
    PATH: toolPath(nodeDir),
  };
}

/**
 * `pulumi login --local` (for the home `env` names: `--local` would take the machine account's) and a new stack of
 * the project in `workDir`, for a user's environment `env`.
 */
export async function userProjectStack(workDir: string, env: Record<string, string>): Promise<Stack> {
  process.env.PATH = env.PATH; // where the Automation API looks for the CLI
  const pulumiCommand = await PulumiCommand.get({ skipVersionCheck: true });
  await new Promise<void>((resolve, reject) => {
    const child = spawn(pulumiCommand.command, ["login", `file://${env.HOME}`], {
      cwd: workDir,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk));
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`pulumi login --local: ${output}`))));
  });
  const stackName = `e2e-${randomBytes(3).toString("hex")}`;
  return LocalWorkspace.createOrSelectStack({ stackName, workDir }, { pulumiCommand, envVars: env });
}

/** Destroys the stack (errors into the test's diagnostics) and removes it from the backend. */
export async function destroyStack(t: TestContext, stack: Stack): Promise<void> {
  await stack.destroy({ onOutput: log(t) }).catch((error: unknown) => t.diagnostic(`destroy: ${String(error)}`));
  await stack.workspace.removeStack(stack.name, { force: true }).catch(() => undefined);
}

/** Engine output into the test's diagnostics, so a failed step explains itself. */
export function log(t: TestContext): (line: string) => void {
  return (line) => {
    for (const text of line.split("\n")) if (text.trim()) t.diagnostic(text);
  };
}

/**
 * `pulumi ARGS` on the stack, as a user types it: the Automation API's `up` always passes `--skip-preview`, and
 * `pulumi up --yes` previews first. Rejects on a non-zero exit with everything the CLI printed.
 */
export async function runCli(stack: Stack, workDir: string, args: readonly string[], t: TestContext): Promise<void> {
  const workspace = stack.workspace as LocalWorkspace;
  const child = spawn(workspace.pulumiCommand.command, [...args, "--stack", stack.name, "--non-interactive"], {
    cwd: workDir,
    env: { ...process.env, ...workspace.envVars },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    log(t)(chunk.toString());
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`pulumi ${args.join(" ")} exited with ${code}:\n${output}`);
}
