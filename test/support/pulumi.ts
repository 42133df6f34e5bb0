/** Test support for the real pulumi engine: the built CLI through the Automation API, offline. */
import { LocalWorkspace, PulumiCommand, type PulumiFn, type Stack } from "@pulumi/pulumi/automation/index.js";
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import type { TestContext } from "node:test";
import { pulumiEnv, toolchainBinDir } from "../../tools/lib/paths.ts";

/**
 * A stack of the program in `workDir`, run by the built CLI (found on PATH, which `npm test` sets) with the
 * local file backend; destroyed and removed when the test ends.
 */
export async function testStack(t: TestContext, workDir: string, config: Record<string, string> = {}): Promise<Stack> {
  const pulumiCommand = await PulumiCommand.get();
  const envVars: Record<string, string> = { ...pulumiEnv(), KUBECONFIG: process.env.KUBECONFIG ?? "" };
  const stackName = `test-${randomBytes(3).toString("hex")}`;
  const stack = await LocalWorkspace.createOrSelectStack({ stackName, workDir }, { pulumiCommand, envVars });
  for (const [key, value] of Object.entries(config)) await stack.setConfig(key, { value });
  t.after(async () => {
    await stack.destroy().catch(() => undefined);
    await stack.workspace.removeStack(stackName, { force: true }).catch(() => undefined);
  });
  return stack;
}

/** What {@link inlineStack} runs. */
export interface InlineStackOptions {
  readonly stackName: string;
  readonly projectName: string;
  readonly program: PulumiFn;
  /** The kubeconfig the engine's own default provider and plugins see. */
  readonly kubeconfigPath: string;
  /** Registers the stack's cleanup (a test/support/teardown.ts `Defer`, or `t.after`). */
  readonly defer: (step: () => Promise<void>) => void;
}

/**
 * A stack of an inline program against the local cluster, run by the toolchain's CLI; destroyed and removed at
 * cleanup, with the work directory the Automation API made for it (`automation-XXXXXX` in the temporary
 * directory, which the API itself never removes).
 */
export async function inlineStack(options: InlineStackOptions): Promise<Stack> {
  const { stackName, projectName, program, kubeconfigPath, defer } = options;
  const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
  // The toolchain's bin directory holds pulumi and the plugins it launches; `npm test` puts it on PATH already.
  if (!(process.env.PATH ?? "").split(path.delimiter).includes(binDir)) {
    process.env.PATH = [binDir, process.env.PATH].join(path.delimiter);
  }
  const pulumiCommand = await PulumiCommand.get({ skipVersionCheck: true });
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName, projectName, program },
    { pulumiCommand, envVars: { ...pulumiEnv(), KUBECONFIG: kubeconfigPath } },
  );
  defer(async () => {
    // Normally already destroyed by the test; this covers a failure half-way.
    await stack.destroy().catch(() => undefined);
    await stack.workspace.removeStack(stackName, { force: true }).catch(() => undefined);
    await rm(stack.workspace.workDir, { recursive: true, force: true });
  });
  return stack;
}
