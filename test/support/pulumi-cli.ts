/**
 * The real pulumi CLI on a throwaway project and stack, offline (local file backend): for the tests that need
 * the CLI's own behaviour (signals, locks, pending operations) rather than the Automation API's. The project
 * lives under .local/e2e and goes, with its stack, when the test ends: the stack is removed with --force, not
 * destroyed (the test's namespace takes its objects), so a cleanup never waits on a finalizer.
 */
import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { promisify } from "node:util";
import { localDir, pulumiEnv, toolchainBinDir } from "../../tools/lib/paths.ts";

const execFileAsync = promisify(execFile);

export interface PulumiResult {
  readonly ok: boolean;
  readonly output: string;
}

/** A `pulumi up` running in the background. */
export interface RunningUp {
  readonly child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves once the CLI exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface PulumiProject {
  readonly workDir: string;
  readonly stackName: string;
  /** Runs `pulumi ARGS` in the project; never throws for a failed command. */
  pulumi(...args: string[]): Promise<PulumiResult>;
  /** Runs `pulumi ARGS` and fails the test, with the CLI's output, if it fails. */
  must(...args: string[]): Promise<string>;
  /** Starts `pulumi up --yes --skip-preview --non-interactive` in the background. */
  startUp(): RunningUp;
}

/**
 * A project named `name` with `program` as its index.ts (plain TypeScript Node 24 runs), and a fresh stack of it.
 * Cleanup cancels a lock left behind and removes the stack and the project directory.
 */
export async function pulumiProject(t: TestContext, name: string, program: string): Promise<PulumiProject> {
  const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
  const suffix = randomBytes(3).toString("hex");
  const workDir = path.join(localDir, "e2e", `${name}-${suffix}`);
  mkdirSync(workDir, { recursive: true });
  writeFileSync(
    path.join(workDir, "Pulumi.yaml"),
    `name: ${name}\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.ts\n`,
  );
  writeFileSync(path.join(workDir, "index.ts"), program);
  const stackName = `${name}-${suffix}`;
  const env = {
    ...process.env,
    ...pulumiEnv(),
    KUBECONFIG: process.env.KUBECONFIG!,
    // Node 24 first, for the language host and the dynamic provider's launcher.
    PATH: [binDir, path.dirname(process.execPath), process.env.PATH].join(path.delimiter),
  };
  const pulumi = async (...args: string[]): Promise<PulumiResult> => {
    const options = { cwd: workDir, env, maxBuffer: 64 * 1024 * 1024 };
    try {
      const { stdout, stderr } = await execFileAsync(path.join(binDir, "pulumi"), args, options);
      return { ok: true, output: stdout + stderr };
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
    }
  };
  const must = async (...args: string[]) => {
    const result = await pulumi(...args);
    assert.ok(result.ok, `pulumi ${args.join(" ")} failed:\n${result.output}`);
    return result.output;
  };
  const running = new Set<ChildProcess>();
  t.after(async () => {
    for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await pulumi("cancel", "--yes", "--non-interactive", "--stack", stackName);
    await pulumi("stack", "rm", stackName, "--yes", "--force", "--non-interactive");
    rmSync(workDir, { recursive: true, force: true });
  });
  await must("stack", "init", stackName, "--non-interactive");
  return {
    workDir,
    stackName,
    pulumi,
    must,
    startUp() {
      const child = spawn(
        path.join(binDir, "pulumi"),
        ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", stackName],
        { cwd: workDir, env, stdio: ["ignore", "pipe", "pipe"] },
      );
      running.add(child);
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on("close", (code, signal) => resolve({ code, signal })),
      );
      return { child, output: () => output, exited };
    },
  };
}
