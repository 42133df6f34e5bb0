/**
 * The operator as a local background process (pods do not execute on kwok), running with its ServiceAccount's
 * credentials: a TokenRequest token in .local/operator.kubeconfig, so every local run proves the RBAC.
 */
import { spawn } from "node:child_process";
import { openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { serviceAccountKubeconfig } from "../../components/index.ts";
import { KubeClient, loadKubeConfig } from "../../kube/index.ts";
import { kubeconfigPath, localDir, repoRoot } from "./paths.ts";
import { progress, waitFor } from "./progress.ts";
import { isAlive } from "./run.ts";

const pidFile = path.join(localDir, "operator.pid");
export const operatorLog = path.join(localDir, "operator.log");
export const operatorKubeconfig = path.join(localDir, "operator.kubeconfig");

export interface OperatorIdentity {
  readonly namespace: string;
  readonly serviceAccount: string;
  /** Namespaces the local operator watches; empty for all. */
  readonly watchNamespaces: readonly string[];
}

export function operatorPid(): number | undefined {
  try {
    const pid = Number(readFileSync(pidFile, "utf8"));
    return pid > 0 && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits until the ServiceAccount exists and its token may list MyAppInstances (CRD served, RBAC bound), then
 * starts the operator with that token. Does nothing if it already runs.
 */
export async function startOperatorWhenReady(identity: OperatorIdentity, timeoutMs = 600_000): Promise<number> {
  const running = operatorPid();
  if (running) return running;
  const step = progress("operator");
  const admin = new KubeClient(loadKubeConfig({ path: kubeconfigPath }));
  step(`waiting for ServiceAccount ${identity.namespace}/${identity.serviceAccount} and its RBAC`);
  const kubeconfig = await waitFor(
    "the operator ServiceAccount's token to be allowed to list myappinstances",
    async () => {
      const config = await serviceAccountKubeconfig(admin, identity.namespace, identity.serviceAccount);
      const asOperator = new KubeClient(loadKubeConfig({ kubeconfig: config }));
      await asOperator.list("example.com/v1", "MyAppInstance", { limit: 1 });
      return config;
    },
    { timeoutMs, intervalMs: 1000 },
  );
  writeFileSync(operatorKubeconfig, kubeconfig, { mode: 0o600 });
  const log = openSync(operatorLog, "a");
  const args = [
    "tools/operator.ts",
    "--metrics-bind-address=127.0.0.1:18080",
    "--health-probe-bind-address=127.0.0.1:18081",
  ];
  if (identity.watchNamespaces.length > 0) args.push(`--namespaces=${identity.watchNamespaces.join(",")}`);
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, KUBECONFIG: operatorKubeconfig },
    detached: true,
    stdio: ["ignore", log, log],
  });
  child.unref();
  writeFileSync(pidFile, String(child.pid));
  step(`started (pid ${child.pid}) with the ServiceAccount's token; logs: ${path.relative(repoRoot, operatorLog)}`);
  return child.pid!;
}

/** SIGTERM (the operator drains and exits), SIGKILL if it is still there after 30 s. */
export async function stopOperator(): Promise<void> {
  const pid = operatorPid();
  if (pid) {
    process.kill(pid, "SIGTERM");
    await waitFor("the operator to exit", async () => (isAlive(pid) ? undefined : true), { timeoutMs: 30_000 }).catch(
      () => process.kill(pid, "SIGKILL"),
    );
  }
  rmSync(pidFile, { force: true });
}
