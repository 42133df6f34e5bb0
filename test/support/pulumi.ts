/** Test support for the real pulumi engine: the built CLI through the Automation API, offline. */
import { LocalWorkspace, PulumiCommand, type Stack } from "@pulumi/pulumi/automation/index.js";
import { randomBytes } from "node:crypto";
import type { TestContext } from "node:test";
import { pulumiEnv } from "../../tools/lib/paths.ts";

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
