/**
 * `npm start`: the whole platform on the local cluster, end to end. Builds (or finds) the toolchain, starts the
 * cluster, runs `pulumi up` on the `dev` stack (which installs the CRD, namespace, ServiceAccount and RBAC, and
 * declares the instances), starts the operator as a local process with its ServiceAccount's token as soon as
 * that exists, and prints the instances. Running it again is safe and fast.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { clusterIdentity } from "../kube/cluster-identity.ts";
import { KubeClient, loadKubeConfig } from "../kube/index.ts";
import { clusterUp } from "./lib/cluster.ts";
import {
  appliedToFile,
  lastUpComplete,
  pendingOperations,
  recordAppliedTo,
  stackStateFile,
  stateOrigin,
  upPlan,
} from "./lib/dev-stack-cluster.ts";
import { formatTable, instanceRows } from "./lib/instances-table.ts";
import {
  devStackFlags,
  devStackOperator,
  operatorLog,
  startOperatorWhenReady,
  watchOperator,
  type OperatorRecord,
} from "./lib/operator-process.ts";
import { clusterName, kubeconfigPath, localDir, repoRoot } from "./lib/paths.ts";
import { holdCheckoutCommand } from "./lib/checkout-command.ts";
import { exitWith, readCommandLine, startCommand } from "./lib/command-flags.ts";
import { endOnUncaughtFailure } from "./lib/command-failure.ts";
import { progress } from "./lib/progress.ts";
import { privateTmp } from "./lib/private-tmp.ts";
import { forgetStack } from "./lib/pulumi.ts";
import { prepareToolchain } from "./lib/toolchain.ts";
import { run } from "./lib/run.ts";

const stack = "dev";
/** What every pulumi command of this one runs with: on the dev stack, without asking. */
const unattended = ["--yes", "--non-interactive", "--skip-preview", "--stack", stack];

// Before anything runs: --help answers, and an argument (npm start takes none) is refused rather than ignored.
const command = readCommandLine(process.argv.slice(2), startCommand);
if ("exit" in command) exitWith(command);
const step = progress("start");
endOnUncaughtFailure("npm start");
holdCheckoutCommand("npm start");
// The operator starts as soon as pulumi up has created its ServiceAccount and RBAC; pulumi up meanwhile waits for
// the instances to be Ready, so if the operator dies, pulumi up is stopped at once instead of waiting for nothing.
let pulumiChild: ReturnType<typeof spawn> | undefined;
let operatorDied: string | undefined;
let operatorFailed: string | undefined;
let stopWatching = () => {};
let interruptedBy: NodeJS.Signals | undefined;
/**
 * Stops pulumi for a failed operator with one SIGINT, which ends its up gracefully; not when a signal (the user's
 * Ctrl-C) or an earlier stop is already ending it: a second SIGINT makes pulumi terminate at once ("^C received;
 * terminating"), leaving pending operations in its state.
 */
let pulumiStopping = false;
function stopPulumi(): void {
  if (pulumiStopping || interruptedBy !== undefined) return;
  pulumiStopping = pulumiChild?.kill("SIGINT") ?? false;
}
/** What an interrupted run leaves, and what to run next: the cluster and the operator run on by design. */
const leftRunning =
  "what started so far is left running (the local cluster, the operator once started): `npm start` again " +
  "continues from there, `npm run down` stops everything";
// Ctrl-C reaches pulumi too (one process group), which ends its up gracefully: that is waited for, and then this
// command says it was cancelled and stops. At any other step it ends here, through process.exit, so its private
// temporary directory (with pulumi-kubernetes' copy of the kubeconfig) goes with it.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    interruptedBy ??= signal;
    if (pulumiChild && pulumiChild.exitCode === null && pulumiChild.signalCode === null) {
      if (signal !== "SIGINT") pulumiChild.kill(signal);
      return;
    }
    console.error(`\nnpm start interrupted (${signal}): ${leftRunning}.`);
    process.exit(130);
  });
}
step("toolchain (a cold build takes a while; cached pieces are skipped)");
const { binDir, env: toolchainEnv } = await prepareToolchain();
// pulumi's own temporary directory, removed when this command ends (tools/lib/private-tmp.ts says why).
const env: NodeJS.ProcessEnv = { ...toolchainEnv, ...privateTmp("myapp-pulumi").env };
await clusterUp();

const pulumi = path.join(binDir, "pulumi");
// With the flags the stack's last `pulumi up` installed (none yet: what stacks/index.ts declares unchanged).
const operator: Promise<OperatorRecord> = startOperatorWhenReady(
  devStackOperator(await devStackFlags(pulumi, env)),
).then((record) => {
  stopWatching = watchOperator(record, (tail) => {
    operatorDied = tail;
    stopPulumi();
  });
  return record;
});
operator.catch((error: unknown) => {
  operatorFailed = error instanceof Error ? error.message : String(error);
  stopPulumi();
});

// The stack's state describes objects in one cluster: if it was last applied to another, pulumi up refreshes
// first, so it recreates what is gone instead of trusting it; if the local cluster was recreated since, what the
// state describes went with the old one, and the state is forgotten (dev-stack-cluster.ts).
const admin = new KubeClient(loadKubeConfig({ path: kubeconfigPath }));
const cluster = await clusterIdentity(admin);
const appliedTo = appliedToFile(env.PULUMI_BACKEND_URL!, stack);
const origin = stateOrigin(appliedTo, cluster, clusterName);
if (origin === "recreated-cluster") {
  step(`the ${stack} stack's state is of a cluster recreated since (${cluster.server}): forgetting it`);
  await forgetStack(pulumi, stack, env);
}
await run(pulumi, ["stack", "select", stack, "--create", "--non-interactive"], { env, cwd: repoRoot });
// An up cut short (Ctrl-C, a crash) left objects in this cluster that its state may not know of, and maybe pending
// operations: refreshed first, clearing them (dev-stack-cluster.ts's upPlan says why a refresh of its own).
const plan = upPlan(
  origin,
  lastUpComplete(appliedTo),
  pendingOperations(stackStateFile(env.PULUMI_BACKEND_URL!, stack)),
);
recordAppliedTo(appliedTo, cluster, clusterName, false);
if (plan.clearPendingCreates !== undefined) {
  step(`pulumi refresh --stack ${stack} --clear-pending-creates (${plan.clearPendingCreates})`);
  stoppedEarly("refresh", await runPulumi(["refresh", "--clear-pending-creates", ...unattended]));
}
step(
  `pulumi up --stack ${stack}${plan.refresh !== undefined ? ` --refresh (${plan.refresh})` : ""} (installs the platform, then waits for every instance to be Ready)`,
);
const up = await runPulumi(["up", ...unattended, ...(plan.refresh !== undefined ? ["--refresh"] : [])]);
stopWatching();
stoppedEarly("up", up);
recordAppliedTo(appliedTo, cluster, clusterName, true);
// The platform this up installed may want other flags (a policy, limits, namespaces): restarted with them if so.
const { metricsPort } = await operator.then(async () =>
  startOperatorWhenReady(devStackOperator(await devStackFlags(pulumi, env))),
);

const rows = await instanceRows(admin);
console.log(`\n${formatTable(rows)}\n`);
console.log(`Next:
  edit stacks/index.ts, then   npm run pulumi -- preview --stack dev     # the exact diff
                               npm run pulumi -- up --stack dev          # applies it (the operator follows)
  npm run kubectl -- get myappinstances -A
  npm run kubectl -- describe myappinstance web                         # conditions and events
  operator logs: ${path.relative(repoRoot, operatorLog)}; metrics: curl 127.0.0.1:${metricsPort}/metrics
  npm run down                                                          # destroy the stack, stop everything
  (state: ${path.relative(repoRoot, localDir)}/)`);

/**
 * Runs pulumi with `args` as the child the signal handlers and the operator's watch stop; resolves with its exit
 * code. Not started (1) once the operator has failed: nothing would become Ready.
 */
function runPulumi(args: readonly string[]): Promise<number> {
  if (operatorDied !== undefined || operatorFailed !== undefined) return Promise.resolve(1);
  return new Promise<number>((resolve) => {
    pulumiChild = spawn(pulumi, args, { env, cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
    pulumiChild.on("close", (code) => resolve(code ?? 1));
  });
}

/** Ends this command, saying why, when pulumi `command` was interrupted, the operator failed, or pulumi did. */
function stoppedEarly(command: "refresh" | "up", code: number): void {
  if (interruptedBy !== undefined) {
    console.error(
      `\nnpm start interrupted (${interruptedBy}) during pulumi ${command}, which stopped: ${leftRunning}.`,
    );
    process.exit(130);
  }
  if (operatorDied !== undefined) {
    console.error(`\nThe operator stopped during pulumi ${command}; its log ends:\n${operatorDied}`);
    process.exit(1);
  }
  if (operatorFailed !== undefined) {
    console.error(`\nThe operator did not start: ${operatorFailed}`);
    process.exit(1);
  }
  if (code !== 0) {
    console.error(
      `\npulumi ${command} failed (exit ${code}). The operator's log is ${path.relative(repoRoot, operatorLog)}.`,
    );
    process.exit(code);
  }
}
