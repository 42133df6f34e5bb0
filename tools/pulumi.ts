/**
 * `npm run pulumi -- ARGS`: the built pulumi CLI, offline: local file backend and private plugin home under
 * .local/, a development passphrase (MYAPP_DEV_PASSPHRASE, default myapp-dev), no update checks or plugin downloads,
 * and a temporary directory of its own, removed when it ends (tools/lib/private-tmp.ts says why).
 *
 * After an `up` of the dev stack, `npm start`'s operator (a local process, not a resource of the stack) follows
 * the platform the stack now declares: restarted with the stack's `operatorFlags` when they changed. After a
 * `destroy` of it, the operator is stopped: its ServiceAccount, RBAC and CRD went, so it has nothing left to run
 * against (and the next `npm start` starts one with the new ServiceAccount's token).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import {
  devStackFlags,
  devStackOperator,
  flagChanges,
  operatorRecord,
  startOperatorWhenReady,
  stopOperator,
} from "./lib/operator-process.ts";
import { privateTmp } from "./lib/private-tmp.ts";
import { anyStack, localSetup, missingLocalSetup } from "./lib/local-setup.ts";
import { appliedStack, destroyedStack, reachedStack } from "./lib/pulumi-arguments.ts";
import { ensurePulumiHome } from "./lib/pulumi.ts";
import { repoRoot, toolchainBinDir } from "./lib/paths.ts";
import { run } from "./lib/run.ts";

try {
  const binDir = toolchainBinDir();
  const pulumi = path.join(binDir, "pulumi");
  const env = { ...(await ensurePulumiHome(binDir)), ...privateTmp("myapp-pulumi").env };
  const args = process.argv.slice(2);
  const child = spawn(pulumi, args, { env, stdio: "inherit", cwd: repoRoot });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, forward);
  const code = await new Promise<number>((resolve) =>
    child.on("exit", (exit, signal) => resolve(exit ?? (signal ? 1 : 0))),
  );
  // From here Ctrl-C stops this process again (pulumi is gone).
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.off(signal, forward);
  // After `npm run down` pulumi says only `no stack named 'dev' found` or that no cluster answers: say which part of
  // the local setup is missing and what makes it, as `npm run kubectl` does. Only for the dev stack (named, or none
  // named and no stack at all, so the selected one would be it): another stack may live on another cluster.
  const stack = reachedStack(args);
  if (code !== 0 && (stack === "dev" || (stack === "" && !anyStack()))) {
    const missing = missingLocalSetup({ cluster: true, devStack: true }, localSetup());
    if (missing) console.error(`npm run pulumi: ${missing}`);
  }
  if (operatorRecord() && (await isDevStack(appliedStack(args)))) {
    // Also after a failed up: the platform may be in place while instances waited for the operator's new flags
    // (a namespace to watch); the stack's output says what it now asks for.
    const flags = await devStackFlags(pulumi, env);
    const identity = flags && devStackOperator(flags);
    const running = operatorRecord();
    if (identity && running && flagChanges(running.started, identity) !== undefined) {
      await startOperatorWhenReady(identity, 120_000);
      if (code !== 0) console.error("The operator now runs with the stack's flags: run the up again.");
    }
  }
  // Only after a destroy that succeeded: a failed one leaves instances whose finalizers need the operator.
  const running = operatorRecord();
  if (code === 0 && running && (await isDevStack(destroyedStack(args)))) {
    console.error(`The dev stack is destroyed: stopping npm start's operator (pid ${running.pid}).`);
    await stopOperator();
  }
  process.exit(code);

  async function isDevStack(stack: string | undefined): Promise<boolean> {
    if (stack !== "") return stack === "dev";
    const { stdout } = await run(pulumi, ["stack", "--show-name"], { env, cwd: repoRoot }).catch(() => ({
      stdout: "",
    }));
    return stdout.trim() === "dev";
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
