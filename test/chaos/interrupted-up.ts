/**
 * An interrupted `pulumi up`, through the real pulumi CLI and the dynamic provider: while an `up` of a fleet is
 * under way (the operator running, a third of the instances applied), the CLI gets SIGINT (Ctrl-C) or SIGKILL.
 * Then: every process of the interrupted run is gone, and the documented recovery works: `pulumi cancel` when the
 * stack is locked, `pulumi refresh --clear-pending-creates`, `pulumi up`, `pulumi refresh`, and `pulumi preview
 * --expect-no-changes`; the fleet converges with one instance per resource and the usual invariants.
 */
import assert from "node:assert/strict";
import path from "node:path";
import type { TestContext } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import type { KubeClient } from "../../kube/index.ts";
import { repoRoot } from "../../tools/lib/paths.ts";
import { testNamespace, waitFor } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { descendants, stillRunning, type ProcessInfo } from "../support/process-tree.ts";
import { pulumiProject } from "../support/pulumi-cli.ts";
import { assertNoCrash, awaitConverged, checkFleet, claimsOf, members, quietWindow, watchProblems } from "./fleet.ts";
import type { Figures } from "./scenarios.ts";

const minutes = (n: number) => n * 60_000;
/** How long a process of a SIGKILLed `pulumi up` may outlive it (none may be left behind). */
const pluginsGoneMs = 10_000;
const seconds = (ms: number) => Math.round(ms / 100) / 10;

export interface InterruptSize {
  readonly instances: number;
  readonly withStorage: number;
  readonly signal: "SIGINT" | "SIGKILL";
}

/** The program: one MyAppInstance per member, auto-named (resource name app-NNN), in `namespace`. */
function fleetProgram(namespace: string, size: InterruptSize): string {
  const fleet = members({ namespace, instances: size.instances, withStorage: size.withStorage, image: "nginx:1.27" });
  return `import { MyAppInstance } from ${JSON.stringify(path.join(repoRoot, "provider/index.ts"))};
const fleet = ${JSON.stringify(fleet)};
export const names = fleet.map(
  (member) => new MyAppInstance(member.name, { namespace: ${JSON.stringify(namespace)}, timeoutSeconds: 600, ...member.spec }).name,
);
`;
}

export async function interruptedUp(t: TestContext, client: KubeClient, size: InterruptSize): Promise<Figures> {
  const namespace = await testNamespace(t, client, `chaos-${size.signal === "SIGINT" ? "ctrlc" : "killup"}`);
  const fleet = members({ namespace, instances: size.instances, withStorage: size.withStorage, image: "nginx:1.27" });
  const operator = await startOperator(t, { namespaces: [namespace], leaderElection: false, label: "up" });
  const problems = await watchProblems(client, namespace);
  const project = await pulumiProject(t, size.signal === "SIGINT" ? "ctrlc" : "killup", fleetProgram(namespace, size));
  const applied = async () => (await client.list(apiVersion, kind, { namespace })).items.length;

  // WHEN a third of the fleet is applied, the `pulumi up` is interrupted
  const up = project.startUp();
  const third = Math.ceil(size.instances / 3);
  await waitFor(
    "a third of the fleet applied by pulumi up",
    async () => ((await applied()) >= third ? true : undefined),
    {
      timeoutMs: minutes(10),
    },
  );
  const tree = descendants(up.child.pid!);
  assert.ok(
    tree.some((p) => p.command.includes("dynamic-provider")),
    `the dynamic provider runs under pulumi up: ${tree.map((p) => p.command.slice(0, 100)).join("; ")}`,
  );
  const appliedAtSignal = await applied();
  const signalledAt = performance.now();
  up.child.kill(size.signal);
  const exit = await up.exited;
  const exitedAt = performance.now();
  if (size.signal === "SIGINT") {
    assert.notEqual(exit.code, 0, `an interrupted up fails:\n${up.output()}`);
    assert.match(up.output(), /cancel|interrupt/i, "the CLI says it was interrupted");
  }

  // THEN every process of the interrupted run goes, within 10 s of a SIGKILL: each plugin the project launches
  // (language host, dynamic-provider host, pulumi-resource-kubernetes) watches its engine and stops what it
  // started (the program); without that, pulumi's Go plugins check their engine only every 5 minutes ...
  const gone = async (what: string, processes: ProcessInfo[], timeoutMs: number) => {
    // The limit counts from the signal, not from when the CLI was seen to exit.
    const remainingMs = Math.max(0, timeoutMs - (performance.now() - signalledAt));
    await waitFor(what, async () => (processes.some(stillRunning) ? undefined : true), {
      timeoutMs: remainingMs,
    }).catch((error: unknown) => {
      const left = processes.filter(stillRunning).map((p) => `${p.pid} ${p.command}`);
      throw new Error(`left behind: ${left.join("; ")}\npulumi up said:\n${up.output()}`, { cause: error });
    });
    return performance.now() - signalledAt;
  };
  const leftovers = (async () => {
    const providerGone = await gone(
      "the dynamic provider to exit",
      tree.filter((p) => p.command.includes("dynamic-provider")),
      minutes(1),
    );
    const allWithin = size.signal === "SIGKILL" ? pluginsGoneMs : minutes(7);
    return { providerGone, allGone: await gone("every process of the interrupted up to exit", tree, allWithin) };
  })();

  // ... and the documented recovery works, meanwhile
  const recovery = (async () => {
    const started = performance.now();
    const retried = await project.pulumi(
      "up",
      "--yes",
      "--skip-preview",
      "--non-interactive",
      "--stack",
      project.stackName,
    );
    let locked = false;
    if (!retried.ok) {
      assert.match(retried.output, /lock/i, `an up after the interruption fails only for the lock:\n${retried.output}`);
      locked = true;
      await project.must("cancel", "--yes", "--non-interactive", "--stack", project.stackName);
      await project.must(
        "refresh",
        "--yes",
        "--skip-preview",
        "--clear-pending-creates",
        "--non-interactive",
        "--stack",
        project.stackName,
      );
      const completed = await project.must(
        "up",
        "--yes",
        "--skip-preview",
        "--non-interactive",
        "--stack",
        project.stackName,
      );
      assert.doesNotMatch(completed, /pending operation/i, "no pending operation is left to warn about");
    }
    await project.must("refresh", "--yes", "--skip-preview", "--non-interactive", "--stack", project.stackName);
    await project.must("preview", "--expect-no-changes", "--non-interactive", "--stack", project.stackName);
    return { locked, recoveryMs: performance.now() - started };
  })();
  const [processes, recovered] = await Promise.all([leftovers, recovery]);
  if (size.signal === "SIGKILL") assert.ok(recovered.locked, "a SIGKILLed up leaves the stack locked");

  // AND the fleet is whole: one instance per resource (none duplicated by the retry), the usual invariants
  await awaitConverged(client, namespace, fleet.length, minutes(10));
  const check = await checkFleet(client, namespace, claimsOf(fleet));
  await problems.stop();
  assert.deepEqual(
    problems.seen.filter((p) => p.type === "Degraded"),
    [],
    "no instance was Degraded",
  );
  const quiet = await quietWindow(operator, 20_000);
  assert.equal(quiet.writes, 0, "no writes once converged");
  assert.ok(quiet.reconciles <= fleet.length, `no hot loop: ${quiet.reconciles} reconciles in 20 s of quiet`);
  await assertNoCrash([operator], new Set());
  return {
    instances: fleet.length,
    withStorage: size.withStorage,
    signal: size.signal,
    appliedAtSignal,
    upExitS: seconds(exitedAt - signalledAt),
    providerGoneS: seconds(processes.providerGone),
    allProcessesGoneS: seconds(processes.allGone),
    locked: recovered.locked ? "yes" : "no",
    recoveryS: seconds(recovered.recoveryMs),
    claims: check.claims,
    quietReconciles: quiet.reconciles,
  };
}
