/**
 * A SIGKILLed `pulumi up`, with the real pulumi engine: while the dynamic provider waits for an instance to
 * become Ready, the CLI is killed. Every process it started (language host, program, dynamic-provider host) must
 * be gone shortly after: none may be left behind (before the fix the provider's host span in an EPIPE loop).
 * Then the documented recovery (README, Troubleshooting) works: `pulumi cancel` removes the lock, `pulumi refresh
 * --clear-pending-creates` the pending create, the next `pulumi up` completes and adopts the instance applied
 * before the kill, and a preview shows no change.
 *
 * Needs the toolchain and the local cluster: run with `npm test -- test/e2e/pulumi-killed.test.ts`.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { apiVersion, kind } from "../../api/index.ts";
import { localDir, pulumiEnv, repoRoot, toolchainBinDir } from "../../tools/lib/paths.ts";
import { adminClient, waitFor } from "../support/cluster.ts";
import { ensureCrd, isReadyAtSpec, startOperator, waitForInstance } from "../support/operator.ts";
import { descendants, stillRunning, type ProcessInfo } from "../support/process-tree.ts";

const client = adminClient();
const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
const minutes = (n: number) => n * 60_000;
const execFileAsync = promisify(execFile);

describe("a SIGKILLed pulumi up", { timeout: minutes(15) }, () => {
  it("leaves no process behind, and cancel + refresh --clear-pending-creates + up recover the stack", async (t) => {
    const suffix = randomBytes(3).toString("hex");
    const namespace = `e2e-killed-${suffix}`;
    const cleanup: (() => Promise<unknown>)[] = [];
    t.after(async () => {
      for (const step of cleanup.reverse()) await step().catch((error: unknown) => t.diagnostic(String(error)));
    });
    await ensureCrd(client);
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    cleanup.push(() => client.delete("v1", "Namespace", namespace));

    // GIVEN a stack with one instance, and no operator yet: `pulumi up` applies it, then waits for Ready
    const workDir = path.join(localDir, "e2e", `killed-${suffix}`);
    mkdirSync(workDir, { recursive: true });
    cleanup.push(async () => rmSync(workDir, { recursive: true, force: true }));
    writeFileSync(
      path.join(workDir, "Pulumi.yaml"),
      "name: killed-e2e\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.ts\n",
    );
    writeFileSync(
      path.join(workDir, "index.ts"),
      `import { MyAppInstance } from ${JSON.stringify(path.join(repoRoot, "provider/index.ts"))};
export const name = new MyAppInstance("web", { namespace: ${JSON.stringify(namespace)}, image: "nginx:1.27" }).name;
`,
    );
    const stackName = `e2e-${suffix}`;
    const env = {
      ...process.env,
      ...pulumiEnv(),
      KUBECONFIG: process.env.KUBECONFIG!,
      // Node 24 first, for the language host and the dynamic provider's launcher.
      PATH: [binDir, path.dirname(process.execPath), process.env.PATH].join(path.delimiter),
    };
    const pulumi = async (...args: string[]) => {
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
    await must("stack", "init", stackName, "--non-interactive");
    cleanup.push(() => pulumi("stack", "rm", stackName, "--yes", "--force", "--non-interactive"));

    const up = spawn(
      path.join(binDir, "pulumi"),
      ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", stackName],
      { cwd: workDir, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let upOutput = "";
    up.stdout.on("data", (chunk: Buffer) => (upOutput += chunk.toString()));
    up.stderr.on("data", (chunk: Buffer) => (upOutput += chunk.toString()));
    const upExited = new Promise<void>((resolve) => up.on("close", () => resolve()));
    cleanup.push(async () => {
      if (up.exitCode === null && up.signalCode === null) up.kill("SIGKILL");
    });

    // WHEN the provider has applied the instance and is waiting for it to become Ready
    const instanceName = await waitFor(
      "the instance applied by pulumi up",
      async () => {
        const { items } = await client.list(apiVersion, kind, { namespace });
        return items[0]?.metadata.name;
      },
      { timeoutMs: minutes(5) },
    );
    const started = await waitFor("the dynamic provider's process", async () => {
      const tree = descendants(up.pid!);
      return tree.some((p) => p.command.includes("dynamic-provider")) ? tree : undefined;
    });
    t.diagnostic(`processes under pulumi up: ${started.map((p) => `${p.pid} ${p.command.slice(0, 120)}`).join("; ")}`);
    // ... and `pulumi up` is SIGKILLed (no chance to stop its plugins)
    up.kill("SIGKILL");
    await upExited;

    // THEN the dynamic provider's host exits at once (it watches its engine), and every other process the CLI
    // started is gone soon after (pulumi's Go plugins health-check their engine every 5 minutes)
    const killedAt = performance.now();
    const goneWithin = async (what: string, processes: ProcessInfo[], timeoutMs: number) => {
      await waitFor(what, async () => (processes.some(stillRunning) ? undefined : true), { timeoutMs }).catch(
        (error: unknown) => {
          const left = processes.filter(stillRunning).map((p) => `${p.pid} ${p.command}`);
          throw new Error(`left behind: ${left.join("; ")}\npulumi up said:\n${upOutput}`, { cause: error });
        },
      );
      t.diagnostic(`${what}: ${Math.round((performance.now() - killedAt) / 1000)} s after the kill`);
    };
    const providers = started.filter((p) => p.command.includes("dynamic-provider"));
    await goneWithin("the dynamic provider exited", providers, minutes(1));
    await goneWithin("no process of the killed pulumi up left", started, minutes(7));

    // AND the documented recovery works. The stack is locked by the dead update:
    const locked = await pulumi("up", "--yes", "--skip-preview", "--non-interactive", "--stack", stackName);
    assert.equal(locked.ok, false, `an up while the stack is locked should fail:\n${locked.output}`);
    assert.match(locked.output, /lock/i);
    // `pulumi cancel` removes the lock
    await must("cancel", "--yes", "--non-interactive", "--stack", stackName);
    // `pulumi refresh --clear-pending-creates` drops the create the kill interrupted
    const refreshed = await must(
      "refresh",
      "--yes",
      "--skip-preview",
      "--clear-pending-creates",
      "--non-interactive",
      "--stack",
      stackName,
    );
    t.diagnostic(`refresh: ${refreshed.split("\n").slice(-12).join("\n")}`);
    // with an operator running, the next `pulumi up` completes, adopting the instance applied before the kill
    const operator = await startOperator(t, { namespaces: [namespace], leaderElection: false });
    cleanup.push(() => operator.stop());
    cleanup.push(() => pulumi("destroy", "--yes", "--skip-preview", "--non-interactive", "--stack", stackName));
    const completed = await must("up", "--yes", "--skip-preview", "--non-interactive", "--stack", stackName);
    assert.doesNotMatch(completed, /pending operation/i, "no pending operation is left to warn about");
    await waitForInstance(client, namespace, instanceName, "Ready", isReadyAtSpec);
    const { items } = await client.list(apiVersion, kind, { namespace });
    assert.deepEqual(
      items.map((item) => item.metadata.name),
      [instanceName],
      "the same instance, adopted, not a second one",
    );
    // and a preview shows nothing to do
    await must("preview", "--expect-no-changes", "--non-interactive", "--stack", stackName);
  });
});
