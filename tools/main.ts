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
import { appliedToFile, lastUpComplete, recordAppliedTo, stateOrigin } from "./lib/dev-stack-cluster.ts";
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
import { progress } from "./lib/progress.ts";
import { privateTmp } from "./lib/private-tmp.ts";
import { forgetStack } from "./lib/pulumi.ts";
import { prepareToolchain } from "./lib/toolchain.ts";
import { run } from "./lib/run.ts";

const stack = "dev";

// Before anything runs: --help answers, and an argument (npm start takes none) is refused rather than ignored.
const command = readCommandLine(process.argv.slice(2), startCommand);
if ("exit" in command) exitWith(command);
const step = progress("start");
holdCheckoutCommand("npm start");
// The operator starts as soon as pulumi up has created its ServiceAccount and RBAC; pulumi up meanwhile waits for
// the instances to be Ready, so if the operator dies, pulumi up is stopped at once instead of waiting for nothing.
let pulumiChild: ReturnType<typeof spawn> | undefined;
let operatorDied: string | undefined;
let operatorFailed: string | undefined;
let stopWatching = () => {};
let interruptedBy: NodeJS.Signals | undefined;
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
    pulumiChild?.kill("SIGINT");
  });
  return record;
});
operator.catch((error: unknown) => {
  operatorFailed = error instanceof Error ? error.message : String(error);
  pulumiChild?.kill("SIGINT");
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
// An up cut short (Ctrl-C, a crash) left objects in this cluster that its state may not list: refreshed first too.
const interrupted = origin === "this-cluster" && !lastUpComplete(appliedTo);
const refresh = origin === "unknown" || interrupted;
recordAppliedTo(appliedTo, cluster, clusterName, false);
const why = interrupted ? "the last up was cut short" : "state of another or no cluster";
step(
  `pulumi up --stack ${stack}${refresh ? ` --refresh (${why})` : ""} (installs the platform, then waits for every instance to be Ready)`,
);
const up = await new Promise<number>((resolve) => {
  const args = [
    "up",
    "--yes",
    "--non-interactive",
    "--skip-preview",
    "--stack",
    stack,
    ...(refresh ? ["--refresh"] : []),
  ];
  pulumiChild = spawn(pulumi, args, {
    env,
    cwd: repoRoot,
    stdio: ["ignore", "inherit", "inherit"],
  });
  pulumiChild.on("close", (code) => resolve(code ?? 1));
});
stopWatching();
if (interruptedBy !== undefined) {
  console.error(`\nnpm start interrupted (${interruptedBy}) during pulumi up, which stopped: ${leftRunning}.`);
  process.exit(130);
}
if (operatorDied !== undefined) {
  console.error(`\nThe operator stopped while pulumi up waited for it; its log ends:\n${operatorDied}`);
  process.exit(1);
}
if (operatorFailed !== undefined) {
  console.error(`\nThe operator did not start: ${operatorFailed}`);
  process.exit(1);
}
if (up !== 0) {
  console.error(`\npulumi up failed (exit ${up}). The operator's log is ${path.relative(repoRoot, operatorLog)}.`);
  process.exit(up);
}
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
