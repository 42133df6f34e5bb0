/**
 * Local clusters: kwokctl's binary runtime (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
 * kwok as local processes on 127.0.0.1, on free ports that no other cluster of this checkout keeps), fake nodes, a
 * default StorageClass and the local volume provisioner. The default cluster is `myapp` (kubeconfig
 * .local/kubeconfig); more can run beside it under other names (`npm run cluster -- up --name other`, kubeconfig
 * .local/kubeconfig-other), each with its own processes, ports and files, so a test can use two clusters at once.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { clusterName as defaultClusterName, localDir, repoRoot, toolEnv, toolchainBinDir } from "./paths.ts";
import { stopOperator } from "./operator-process.ts";
import { processCommandLine, runningProcess, stopProcess, writeProcessRecord } from "./process-record.ts";
import { progress, waitFor } from "./progress.ts";
import { run } from "./run.ts";
import { defaultStorageClass } from "./storage-class.ts";
import { portsConfig, portsForNewCluster, portsInUse, recordedPortsOf } from "./cluster-ports.ts";

export const nodeCount = 3;
const kwokWorkdir = path.join(localDir, "kwok");

/** Every file and directory that belongs to one local cluster. */
export interface LocalCluster {
  readonly name: string;
  /** Admin kubeconfig (system:masters). */
  readonly kubeconfig: string;
  /** kwokctl's directory of this cluster (pki, pids, logs, etcd data). */
  readonly dir: string;
  /** The kwokctl configuration the cluster was created with. */
  readonly configFile: string;
  readonly provisionerRecord: string;
  readonly provisionerLog: string;
}

/** The files of cluster `name`; the default cluster keeps the historical names (.local/kubeconfig, ...). */
export function localCluster(name: string = defaultClusterName): LocalCluster {
  if (!/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/.test(name)) {
    throw new Error(`cluster name "${name}": use 1-32 lowercase letters, digits and '-', starting and ending alnum`);
  }
  const suffix = name === defaultClusterName ? "" : `-${name}`;
  return {
    name,
    kubeconfig: path.join(localDir, `kubeconfig${suffix}`),
    dir: path.join(kwokWorkdir, "clusters", name),
    configFile: path.join(localDir, `kwokctl${suffix}.yaml`),
    provisionerRecord: path.join(localDir, `provisioner${suffix}.json`),
    provisionerLog: path.join(localDir, `provisioner${suffix}.log`),
  };
}

export interface ClusterStatus {
  readonly name: string;
  readonly kubeconfig: string;
  readonly exists: boolean;
  readonly components: readonly ClusterComponent[];
  readonly provisioner: { pid: number; running: boolean } | undefined;
  readonly readyz: string;
  readonly healthy: boolean;
  readonly readyNodes: number;
  readonly serverVersion: string;
}

/**
 * Sized for a fleet of 10,000 instances (bench/cluster-capacity.ts measures it): a /16 Service range (the
 * default /24 runs out at ~250 Services), controller-manager and scheduler clients at 500 qps instead of 20 and 50
 * (the defaults throttle a fleet's ReplicaSets, Pods and bindings to a crawl), more controller-manager workers,
 * and nodes that take 4,000 pods each on their own /16 of pod IPs (see `scaleNodeParams`).
 */
export const serviceCidr = "10.96.0.0/16";
export const podsPerNode = 4000;
const clientQps = ["kube-api-qps", "500", "kube-api-burst", "1000"];

export function kwokctlConfig(binDir: string): string {
  const bin = (name: string) => path.join(binDir, name);
  const args = (component: string, ...pairs: string[]) => [
    `- name: ${component}`,
    "  extraArgs:",
    ...pairs.flatMap((v, i) => (i % 2 === 0 ? [`  - key: ${v}`, `    value: "${pairs[i + 1]}"`] : [])),
  ];
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
    "componentsPatches:",
    ...args("kube-apiserver", "service-cluster-ip-range", serviceCidr),
    ...args(
      "kube-controller-manager",
      "service-cluster-ip-range",
      serviceCidr,
      ...clientQps,
      "concurrent-deployment-syncs",
      "10",
      "concurrent-replicaset-syncs",
      "10",
      "concurrent-statefulset-syncs",
      "10",
      "concurrent-service-endpoint-syncs",
      "10",
    ),
    ...args("kube-scheduler", ...clientQps),
    "",
  ].join("\n");
}

/**
 * cpu and memory per node for `podsPerNode` pods of the API's default requests (100m, 128Mi) with room to spare:
 * kwok's default node (32 cpus, 256Gi) holds only 320 of them, and the rest would stay Pending.
 */
export const nodeResources = { cpu: "1000", memory: "4Ti" };

/** `kwokctl scale node` parameters: pod, cpu and memory capacity, and a /16 of pod IPs per node (kwok hands them out). */
export const scaleNodeParams = [
  "--param",
  `.allocatable.pods=${podsPerNode}`,
  "--param",
  `.allocatable.cpu="${nodeResources.cpu}"`,
  "--param",
  `.allocatable.memory="${nodeResources.memory}"`,
  "--param",
  '.podCIDRs=["10.0.0.0/16","fd00::/64"]',
];

function plainPid(file: string): number {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return 0;
  }
}

/** One process of a local cluster (etcd, kube-apiserver, ...), as its kwokctl pid file names it. */
export interface ClusterComponent {
  readonly name: string;
  readonly pid: number;
  readonly running: boolean;
}

/**
 * kwokctl's pid files hold a bare pid; a component counts as running only if that pid's command line names this
 * cluster's directory (every component is started with a path in it), so a reused pid is never taken for it.
 */
function components(cluster: LocalCluster): ClusterComponent[] {
  const pidsDir = path.join(cluster.dir, "pids");
  if (!existsSync(pidsDir)) return [];
  return readdirSync(pidsDir)
    .filter((f) => f.endsWith(".pid"))
    .map((f) => {
      const pid = plainPid(path.join(pidsDir, f));
      return { name: f.replace(/\.pid$/, ""), pid, running: pid > 0 && processCommandLine(pid).includes(cluster.dir) };
    });
}

export async function clusterStatus(name: string = defaultClusterName): Promise<ClusterStatus> {
  const cluster = localCluster(name);
  const exists = existsSync(path.join(cluster.dir, "kwok.yaml"));
  const provisionerProcess = runningProcess(cluster.provisionerRecord);
  const provisioner = provisionerProcess ? { pid: provisionerProcess.pid, running: true } : undefined;
  let readyz = "unreachable";
  let readyNodes = 0;
  let serverVersion = "";
  if (exists && existsSync(cluster.kubeconfig)) {
    try {
      const client = new KubeClient(loadKubeConfig({ path: cluster.kubeconfig }));
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
  const healthy = readyz === "ok" && readyNodes >= nodeCount && provisioner !== undefined;
  return {
    name,
    kubeconfig: cluster.kubeconfig,
    exists,
    components: components(cluster),
    provisioner,
    readyz,
    healthy,
    readyNodes,
    serverVersion,
  };
}

/** The clusters of this checkout (the default one and those made with `--name`), by name. */
export function localClusterNames(): string[] {
  const dir = path.join(kwokWorkdir, "clusters");
  return existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort()
    : [];
}

/** Starts cluster `name`, or finishes starting it; fast when it is already up. */
export async function clusterUp(name: string = defaultClusterName): Promise<ClusterStatus> {
  const cluster = localCluster(name);
  const step = progress(name === defaultClusterName ? "cluster" : `cluster ${name}`);
  const binDir = toolchainBinDir();
  const env = toolEnv(binDir);
  const before = await clusterStatus(name);
  if (before.healthy) {
    step(`already up: ${before.serverVersion}, ${before.readyNodes} nodes Ready`);
    return before;
  }
  mkdirSync(kwokWorkdir, { recursive: true });
  const kwokctl = path.join(binDir, "kwokctl");
  if (!before.exists) {
    // Files left from an earlier cluster of this name would point at dead ports and unknown tokens: they go first.
    rmSync(cluster.kubeconfig, { force: true });
    if (name === defaultClusterName) await stopOperator();
    writeFileSync(cluster.configFile, kwokctlConfig(binDir));
    // Not the ports a stopped cluster of this checkout keeps: kwokctl alone would take them, and that one could
    // not start again.
    const portsFile = `${cluster.configFile}.ports`;
    writeFileSync(portsFile, portsConfig(await portsForNewCluster(portsKeptByOthers(name))));
    step("creating cluster (etcd, kube-apiserver, controller-manager, scheduler, kwok)");
    try {
      await run(
        kwokctl,
        [
          "create",
          "cluster",
          "--name",
          name,
          "--config",
          cluster.configFile,
          "--config",
          portsFile,
          "--kubeconfig",
          cluster.kubeconfig,
          "--wait",
          "3m",
        ],
        { env },
      );
    } finally {
      rmSync(portsFile, { force: true });
    }
  } else {
    const created = existsSync(cluster.configFile) ? readFileSync(cluster.configFile, "utf8") : "";
    if (created !== kwokctlConfig(binDir)) {
      step(
        "note: this cluster was made with an older configuration or toolchain (it may hold fewer Services and " +
          `pods); 'npm run cluster -- down' then 'up'${name === defaultClusterName ? "" : ` --name ${name}`} remakes it`,
      );
    }
  }
  if (before.exists && (before.components.some((c) => !c.running) || before.components.length === 0)) {
    const recorded = path.join(cluster.dir, "kwok.yaml");
    // A running component of this cluster holds its own port; only the stopped components' ports are checked.
    const running = new Set(before.components.filter((c) => c.running).map((c) => c.name));
    const stoppedPorts = existsSync(recorded)
      ? recordedPortsOf(readFileSync(recorded, "utf8")).filter(({ component }) => !running.has(component))
      : [];
    const taken = await portsInUse(stoppedPorts.map(({ port }) => port));
    if (taken.length > 0) {
      throw new Error(
        `cluster ${name} listens on ports kwokctl chose when it was created, and another process now has ` +
          `${taken.length === 1 ? "port" : "ports"} ${taken.join(", ")} (another cluster?): stop it, or run ` +
          `'npm run cluster -- down${name === defaultClusterName ? "" : ` --name ${name}`}' and 'up' again to ` +
          "remake this cluster on free ports (its objects are not kept)",
      );
    }
    step("starting stopped cluster");
    forgetStoppedComponents(cluster);
    await run(kwokctl, ["start", "cluster", "--name", name, "--wait", "3m"], { env });
  }
  const client = new KubeClient(loadKubeConfig({ path: cluster.kubeconfig }));
  await waitFor("apiserver /readyz", async () => ((await client.raw("/readyz")).trim() === "ok" ? true : undefined));

  const nodes = await client.list("v1", "Node");
  if (nodes.items.length < nodeCount) {
    step(`adding fake nodes (${nodes.items.length} -> ${nodeCount})`);
    await run(kwokctl, ["scale", "node", "--replicas", String(nodeCount), "--name", name, ...scaleNodeParams], {
      env,
    });
  }
  await waitFor(`${nodeCount} Ready nodes`, async () =>
    (await clusterStatus(name)).readyNodes >= nodeCount ? true : undefined,
  );
  await waitFor("the default ServiceAccount (controller-manager up)", () =>
    client.find("v1", "ServiceAccount", "default", "default").then((sa) => (sa ? true : undefined)),
  );
  await client.apply(defaultStorageClass as KubeObject, { fieldManager: "myapp-cluster-tools" });
  startProvisioner(cluster, env);

  const after = await waitFor("cluster healthy", async () => {
    const status = await clusterStatus(name);
    return status.healthy ? status : undefined;
  });
  step(
    `up: ${after.serverVersion}, ${after.readyNodes} nodes Ready, kubeconfig ${path.relative(repoRoot, cluster.kubeconfig)}`,
  );
  return after;
}

/** The ports the other clusters of this checkout listen on, or will when started again. */
function portsKeptByOthers(name: string): Set<number> {
  const kept = new Set<number>();
  for (const other of localClusterNames()) {
    const recorded = path.join(kwokWorkdir, "clusters", other, "kwok.yaml");
    if (other === name || !existsSync(recorded)) continue;
    for (const { port } of recordedPortsOf(readFileSync(recorded, "utf8"))) kept.add(port);
  }
  return kept;
}

/** Checkouts older than the process records kept a bare pid in .local/provisioner.pid. */
function stopLegacyProvisioner(): void {
  const file = path.join(localDir, "provisioner.pid");
  const pid = plainPid(file);
  if (pid && processCommandLine(pid).includes(path.join(repoRoot, "tools/provisioner.ts")))
    process.kill(pid, "SIGTERM");
  rmSync(file, { force: true });
}

function startProvisioner(cluster: LocalCluster, env: NodeJS.ProcessEnv): void {
  if (cluster.name === defaultClusterName) stopLegacyProvisioner();
  if (runningProcess(cluster.provisionerRecord)) return;
  const logFile = openSync(cluster.provisionerLog, "a");
  const child = spawn(process.execPath, [path.join(repoRoot, "tools/provisioner.ts")], {
    env: { ...env, KUBECONFIG: cluster.kubeconfig },
    detached: true,
    stdio: ["ignore", logFile, logFile],
  });
  child.unref();
  writeProcessRecord(cluster.provisionerRecord, child.pid!, { cluster: cluster.name });
}

/** The processes of cluster `name` (pid files of kwokctl, checked against the cluster's directory). */
export function clusterComponents(name: string = defaultClusterName): ClusterComponent[] {
  return components(localCluster(name));
}

/**
 * Removes the pid files of components that are not running. kwokctl takes a pid that answers signal 0 for a
 * running component, and a killed component stays a zombie (answering signal 0) wherever nothing reaps orphans
 * (a container whose init does not): kwokctl would then never start it again.
 */
function forgetStoppedComponents(cluster: LocalCluster): void {
  for (const component of components(cluster)) {
    if (!component.running) rmSync(path.join(cluster.dir, "pids", `${component.name}.pid`), { force: true });
  }
}

/**
 * Starts whatever component of cluster `name` is not running (a killed apiserver or etcd), as `up` does for a
 * stopped cluster: `kwokctl start cluster` skips the components that run; then waits for /readyz.
 */
export async function startStoppedComponents(name: string = defaultClusterName): Promise<void> {
  const cluster = localCluster(name);
  const binDir = toolchainBinDir();
  forgetStoppedComponents(cluster);
  await run(path.join(binDir, "kwokctl"), ["start", "cluster", "--name", name, "--wait", "3m"], {
    env: toolEnv(binDir),
  });
  const client = new KubeClient(loadKubeConfig({ path: cluster.kubeconfig }));
  await waitFor("apiserver /readyz", async () => ((await client.raw("/readyz")).trim() === "ok" ? true : undefined));
}

/** Stops every process `up` started for cluster `name` and deletes the cluster's data and files. */
export async function clusterDown(name: string = defaultClusterName): Promise<void> {
  const cluster = localCluster(name);
  const step = progress(name === defaultClusterName ? "cluster" : `cluster ${name}`);
  const provisioner = runningProcess(cluster.provisionerRecord);
  if (provisioner) await stopProcess(provisioner);
  if (name === defaultClusterName) {
    stopLegacyProvisioner();
    await stopOperator(); // the local operator, its token and kubeconfig belong to this cluster: they go with it
  }
  rmSync(cluster.provisionerRecord, { force: true });
  if (existsSync(cluster.dir)) {
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
        ["delete", "cluster", "--name", name, "--kubeconfig", cluster.kubeconfig],
        {
          env: toolEnv(binDir),
        },
      ).catch((error: unknown) => step(`kwokctl delete failed (${String(error)}); stopping by pid`));
    }
    // Whatever kwokctl could not stop (or a missing toolchain) is stopped here: only processes of this cluster.
    for (const component of components(cluster)) {
      if (component.running) process.kill(component.pid, "SIGKILL");
    }
    rmSync(cluster.dir, { recursive: true, force: true });
  }
  rmSync(cluster.kubeconfig, { force: true });
  rmSync(cluster.configFile, { force: true });
  step("down");
}
