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
import { randomBytes } from "node:crypto";
import path from "node:path";
import { describe, it } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import { repoRoot } from "../../tools/lib/paths.ts";
import { adminClient, waitFor } from "../support/cluster.ts";
import { ensureCrd, isReadyAtSpec, startOperator, waitForInstance } from "../support/operator.ts";
import { descendants, stillRunning, type ProcessInfo } from "../support/process-tree.ts";
import { pulumiProject } from "../support/pulumi-cli.ts";

const client = adminClient();
const minutes = (n: number) => n * 60_000;

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
    const project = await pulumiProject(
      t,
      "killed-e2e",
      `import { MyAppInstance } from ${JSON.stringify(path.join(repoRoot, "provider/index.ts"))};
export const name = new MyAppInstance("web", { namespace: ${JSON.stringify(namespace)}, image: "nginx:1.27" }).name;
`,
    );
    const { pulumi, must, stackName } = project;
    const running = project.startUp();
    const up = running.child;

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
    const killedAt = performance.now();
    up.kill("SIGKILL");
    await running.exited;

    // THEN every process the CLI started is gone soon after the kill: each plugin the project launches (the
    // language host, the dynamic provider's host) watches its engine, and the language host stops the program. They
    // look every second; 50 s leaves a busy machine room and still catches one left behind (the EPIPE loop never ended)
    const goneWithin = async (what: string, processes: ProcessInfo[], timeoutMs: number) => {
      const remainingMs = Math.max(0, timeoutMs - (performance.now() - killedAt));
      await waitFor(what, async () => (processes.some(stillRunning) ? undefined : true), {
        timeoutMs: remainingMs,
      }).catch((error: unknown) => {
        const left = processes.filter(stillRunning).map((p) => `${p.pid} ${p.command}`);
        throw new Error(`left behind: ${left.join("; ")}\npulumi up said:\n${running.output()}`, { cause: error });
      });
      t.diagnostic(`${what}: ${Math.round((performance.now() - killedAt) / 1000)} s after the kill`);
    };
    const providers = started.filter((p) => p.command.includes("dynamic-provider"));
    await goneWithin("the dynamic provider exited", providers, 50_000);
    await goneWithin("no process of the killed pulumi up left", started, 50_000);

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
