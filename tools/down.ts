/**
 * `npm run down`: destroys the dev stack (the operator must run: deleting an instance waits for its finalizer, so
 * one that stopped, say with a reboot, is started again first), stops the operator, then deletes the cluster and
 * any other of this checkout (`npm run cluster -- up --name NAME`). `--keep-cluster` leaves the clusters up. When
 * the stack cannot be destroyed, nothing else is stopped: its instances' finalizers need the operator.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { clusterIdentity } from "../kube/cluster-identity.ts";
import { KubeClient, loadKubeConfig } from "../kube/index.ts";
import { clusterDown, clusterStatus, localClusterNames } from "./lib/cluster.ts";
import { appliedToFile, forgetAppliedTo, stateOrigin } from "./lib/dev-stack-cluster.ts";
import { devStackStateFile } from "./lib/local-setup.ts";
import { devStackFlags, devStackOperator, startOperatorWhenReady, stopOperator } from "./lib/operator-process.ts";
import { clusterName, kubeconfigPath, repoRoot, toolchainBinDir } from "./lib/paths.ts";
import { holdCheckoutCommand } from "./lib/checkout-command.ts";
import { downCommand, exitWith, readCommandLine } from "./lib/command-flags.ts";
import { progress } from "./lib/progress.ts";
import { privateTmp } from "./lib/private-tmp.ts";
import { ensurePulumiHome, forgetStack } from "./lib/pulumi.ts";
import { run } from "./lib/run.ts";

// First of all: a misspelt flag, or --help, must never reach the destroy below.
const command = readCommandLine(process.argv.slice(2), downCommand);
if ("exit" in command) exitWith(command);
const step = progress("down");
holdCheckoutCommand("npm run down");
// Ctrl-C reaches pulumi too (one process group), which ends its destroy gracefully in the private temporary
// directory: that is waited for (the destroy then fails, and this command with it). At any other step it ends
// here, through process.exit, so the directory goes with it.
let pulumiChild: ChildProcess | undefined;
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    if (pulumiChild && pulumiChild.exitCode === null && pulumiChild.signalCode === null) {
      interrupted = true;
      if (signal !== "SIGINT") pulumiChild.kill(signal);
      return;
    }
    process.exit(130);
  });
}
const tracked = { onSpawn: (child: ChildProcess) => (pulumiChild = child) };
const keepCluster = command.run.has("keep-cluster");
const stackFile = devStackStateFile();
if ((await clusterStatus()).healthy && existsSync(stackFile)) {
  await destroyOrForget().catch((error: unknown) => {
    console.error(
      `down: the dev stack was not destroyed: ${error instanceof Error ? error.message : String(error)}\n` +
        "The operator and the cluster are left running: fix the cause and run 'npm run down' again, or " +
        "'npm run cluster -- down' to delete the cluster with everything in it.",
    );
    process.exit(1);
  });
}
step("stopping the operator");
await stopOperator();
if (!keepCluster) {
  await clusterDown();
  for (const name of localClusterNames().filter((name) => name !== clusterName)) {
    step(`cluster ${name} (made with --name ${name})`);
    await clusterDown(name);
  }
}
step("down");

/** Destroys the dev stack, or forgets it when its cluster was recreated since. */
async function destroyOrForget(): Promise<void> {
  const binDir = toolchainBinDir();
  // pulumi's own temporary directory, removed when this command ends (tools/lib/private-tmp.ts says why).
  const env: NodeJS.ProcessEnv = { ...(await ensurePulumiHome(binDir)), ...privateTmp("myapp-pulumi").env };
  const admin = new KubeClient(loadKubeConfig({ path: kubeconfigPath }));
  const cluster = await clusterIdentity(admin).finally(() => admin.close());
  const appliedTo = appliedToFile(env.PULUMI_BACKEND_URL!, "dev");
  if (stateOrigin(appliedTo, cluster, clusterName) === "recreated-cluster") {
    // What the state describes went with the old cluster: nothing is left to destroy.
    step(`the dev stack's state is of a cluster recreated since (${cluster.server}): forgetting it`);
    await forgetStack(path.join(binDir, "pulumi"), "dev", env);
  } else {
    await destroyDevStack(binDir, env);
  }
  forgetAppliedTo(appliedTo);
}

async function destroyDevStack(binDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  // Kept when it runs for this cluster; otherwise started, as `npm start` does, so the instances' finalizers are
  // released. A stack whose operator cannot start (its ServiceAccount already gone) is destroyed all the same.
  const identity = devStackOperator(await devStackFlags(path.join(binDir, "pulumi"), env));
  const admin = new KubeClient(loadKubeConfig({ path: kubeconfigPath }));
  const serviceAccount = await admin
    .find("v1", "ServiceAccount", identity.serviceAccount, identity.namespace)
    .finally(() => admin.close());
  if (serviceAccount === undefined) {
    // Nothing to wait for (an earlier down or a failed up removed the platform): said at once, not after 60 s.
    step(
      `no operator to start: ServiceAccount ${identity.namespace}/${identity.serviceAccount} is gone (instances, if ` +
        "any are left, wait for their finalizers until they time out)",
    );
  } else {
    await startOperatorWhenReady(identity, 60_000).catch((error: unknown) =>
      step(`the operator did not start (${String(error)}): instances wait for their finalizers until they time out`),
    );
  }
  step("pulumi destroy --stack dev");
  await run(path.join(binDir, "pulumi"), ["destroy", "--yes", "--non-interactive", "--stack", "dev"], {
    env,
    cwd: repoRoot,
    stdio: ["ignore", "inherit", "inherit"],
    ...tracked,
  });
  // A destroy cancelled by Ctrl-C ends as a success, with what it deleted so far.
  if (interrupted) throw new Error("interrupted: the stack is partly destroyed");
  await run(path.join(binDir, "pulumi"), ["stack", "rm", "dev", "--yes", "--non-interactive", "--preserve-config"], {
    env,
    cwd: repoRoot,
    ...tracked,
  });
}
