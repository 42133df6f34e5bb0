/**
 * The local cluster: kwokctl's binary runtime (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
 * kwok as local processes on 127.0.0.1), 3 fake nodes, a default StorageClass and the local volume provisioner.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { clusterName, kubeconfigPath, localDir, repoRoot, toolEnv, toolchainBinDir } from "./paths.ts";
import { progress, waitFor } from "./progress.ts";
import { isAlive, run } from "./run.ts";
import { defaultStorageClass } from "./storage-class.ts";

export const nodeCount = 3;
const kwokWorkdir = path.join(localDir, "kwok");
const clusterDir = path.join(kwokWorkdir, "clusters", clusterName);
const provisionerPidFile = path.join(localDir, "provisioner.pid");

export interface ClusterStatus {
  readonly exists: boolean;
  readonly components: readonly { name: string; pid: number; running: boolean }[];
  readonly provisioner: { pid: number; running: boolean } | undefined;
  readonly readyz: string;
  readonly healthy: boolean;
  readonly readyNodes: number;
  readonly serverVersion: string;
}

function kwokctlConfig(binDir: string): string {
  const bin = (name: string) => path.join(binDir, name);
  return [
    "apiVersion: config.kwok.x-k8s.io/v1alpha1",
    "kind: KwokctlConfiguration",
    "options:",
    "  runtime: binary",
    "  bindAddress: 127.0.0.1", // kwokctl's default is 0.0.0.0; only this file changes it
    "  kubeAuthorization: true",
    `  etcdBinary: ${bin("etcd")}`,
    `  kubeApiserverBinary: ${bin("kube-apiserver")}`,
    `  kubeControllerManagerBinary: ${bin("kube-controller-manager")}`,
    `  kubeSchedulerBinary: ${bin("kube-scheduler")}`,
    `  kubectlBinary: ${bin("kubectl")}`,
    `  kwokControllerBinary: ${bin("kwok")}`,
    "",
  ].join("\n");
}

function pidOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export async function clusterStatus(): Promise<ClusterStatus> {
  const exists = existsSync(path.join(clusterDir, "kwok.yaml"));
  const pidsDir = path.join(clusterDir, "pids");
  const components = existsSync(pidsDir)
    ? readdirSync(pidsDir)
        .filter((f) => f.endsWith(".pid"))
        .map((f) => {
          const pid = pidOf(path.join(pidsDir, f)) ?? 0;
          return { name: f.replace(/\.pid$/, ""), pid, running: pid > 0 && isAlive(pid) };
        })
    : [];
  const provisionerPid = pidOf(provisionerPidFile);
  const provisioner = provisionerPid ? { pid: provisionerPid, running: isAlive(provisionerPid) } : undefined;
  let readyz = "unreachable";
  let readyNodes = 0;
  let serverVersion = "";
  if (exists && existsSync(kubeconfigPath)) {
    try {
      const client = new KubeClient(loadKubeConfig({ path: kubeconfigPath }));
      readyz = (await client.raw("/readyz")).trim();
      serverVersion = (JSON.parse(await client.raw("/version")) as { gitVersion: string }).gitVersion;
      const nodes = await client.list<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
        "v1",
        "Node",
      );
      readyNodes = nodes.items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      ).length;
    } catch (error) {
      readyz = `unreachable: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  const healthy = readyz === "ok" && readyNodes >= nodeCount && (provisioner?.running ?? false);
  return { exists, components, provisioner, readyz, healthy, readyNodes, serverVersion };
}

/** Starts the cluster, or finishes starting it; fast when it is already up. */
export async function clusterUp(): Promise<ClusterStatus> {
  const step = progress("cluster");
  const binDir = toolchainBinDir();
  const env = toolEnv(binDir);
  const before = await clusterStatus();
  if (before.healthy) {
    step(`already up: ${before.serverVersion}, ${before.readyNodes} nodes Ready`);
    return before;
  }
  mkdirSync(kwokWorkdir, { recursive: true });
  const kwokctl = path.join(binDir, "kwokctl");
  if (!before.exists) {
    const configFile = path.join(localDir, "kwokctl.yaml");
    writeFileSync(configFile, kwokctlConfig(binDir));
    step("creating cluster (etcd, kube-apiserver, controller-manager, scheduler, kwok)");
    await run(
      kwokctl,
      [
        "create",
        "cluster",
        "--name",
        clusterName,
        "--config",
        configFile,
        "--kubeconfig",
        kubeconfigPath,
        "--wait",
        "3m",
      ],
      { env },
    );
  } else if (before.components.some((c) => !c.running) || before.components.length === 0) {
    step("starting stopped cluster");
    await run(kwokctl, ["start", "cluster", "--name", clusterName, "--wait", "3m"], { env });
  }
  const client = new KubeClient(loadKubeConfig({ path: kubeconfigPath }));
  await waitFor("apiserver /readyz", async () => ((await client.raw("/readyz")).trim() === "ok" ? true : undefined));

  const nodes = await client.list("v1", "Node");
  if (nodes.items.length < nodeCount) {
    step(`adding fake nodes (${nodes.items.length} -> ${nodeCount})`);
    await run(kwokctl, ["scale", "node", "--replicas", String(nodeCount), "--name", clusterName], { env });
  }
  await waitFor(`${nodeCount} Ready nodes`, async () =>
    (await clusterStatus()).readyNodes >= nodeCount ? true : undefined,
  );
  await waitFor("the default ServiceAccount (controller-manager up)", () =>
    client.find("v1", "ServiceAccount", "default", "default").then((sa) => (sa ? true : undefined)),
  );
  await client.apply(defaultStorageClass as KubeObject, { fieldManager: "myapp-cluster-tools" });
  startProvisioner(env);

  const after = await waitFor("cluster healthy", async () => {
    const status = await clusterStatus();
    return status.healthy ? status : undefined;
  });
  step(
    `up: ${after.serverVersion}, ${after.readyNodes} nodes Ready, kubeconfig ${path.relative(repoRoot, kubeconfigPath)}`,
  );
  return after;
}

function startProvisioner(env: NodeJS.ProcessEnv): void {
  const pid = pidOf(provisionerPidFile);
  if (pid && isAlive(pid)) return;
  const logFile = openSync(path.join(localDir, "provisioner.log"), "a");
  const child = spawn(process.execPath, [path.join(repoRoot, "tools/provisioner.ts")], {
    env: { ...env, KUBECONFIG: kubeconfigPath },
    detached: true,
    stdio: ["ignore", logFile, logFile],
  });
  child.unref();
  writeFileSync(provisionerPidFile, String(child.pid));
}

/** Stops every process `up` started and deletes the cluster's data. */
export async function clusterDown(): Promise<void> {
  const step = progress("cluster");
  const pid = pidOf(provisionerPidFile);
  if (pid && isAlive(pid)) {
    process.kill(pid, "SIGTERM");
    await waitFor("provisioner to stop", async () => (isAlive(pid) ? undefined : true), { timeoutMs: 10_000 }).catch(
      () => process.kill(pid, "SIGKILL"),
    );
  }
  rmSync(provisionerPidFile, { force: true });
  if (existsSync(clusterDir)) {
    step("deleting cluster (stops etcd, apiserver, controller-manager, scheduler, kwok)");
    let binDir: string | undefined;
    try {
      binDir = toolchainBinDir();
    } catch {
      binDir = undefined;
    }
    if (binDir) {
      await run(
        path.join(binDir, "kwokctl"),
        ["delete", "cluster", "--name", clusterName, "--kubeconfig", kubeconfigPath],
        {
          env: toolEnv(binDir),
        },
      ).catch((error: unknown) => step(`kwokctl delete failed (${String(error)}); stopping by pid`));
    }
    // Whatever kwokctl could not stop (or a missing toolchain) is stopped here, by pid.
    for (const component of (await clusterStatus()).components) {
      if (component.running) process.kill(component.pid, "SIGKILL");
    }
    rmSync(clusterDir, { recursive: true, force: true });
  }
  rmSync(kubeconfigPath, { force: true });
  step("down");
}
