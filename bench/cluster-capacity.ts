/**
 * Cluster capacity: can the local cluster hold a fleet? On a fresh local cluster of its own (named `capacity`, made
 * with the same configuration as everyone's, deleted afterwards), it creates the children of N instances directly,
 * with no operator: a Service and a Deployment (1 replica) each, except S of them that get a StatefulSet with a
 * 1Gi volume claim instead, and waits until every Deployment and StatefulSet is Ready and every claim Bound. It
 * records how long that took and each control-plane process's memory (RSS) at the end.
 *
 *   npx node bench/cluster-capacity.ts [--instances 10000] [--stateful 200] [--budget-minutes 60] [--keep] [--no-record]
 *
 * When the budget runs out first, it records how far it got (objects created, workloads Ready, memory then),
 * marked incomplete: on a busy machine that is the honest figure.
 *
 * Records bench/results/cluster-capacity.json and a row in the "Cluster capacity" table of bench/RESULTS.md.
 * --keep leaves the cluster up (kubeconfig .local/kubeconfig-capacity); `npm run cluster -- down --name capacity`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { insertIntoSection, type ResultsSection } from "./support/results-section.ts";
import { cpus, loadavg, totalmem } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  ConflictError,
  KubeClient,
  ServerError,
  TooManyRequestsError,
  TransportError,
  loadKubeConfig,
  type KubeObject,
} from "../kube/index.ts";
import { clusterDown, clusterStatus, clusterUp, nodeCount, podsPerNode, serviceCidr } from "../tools/lib/cluster.ts";

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const clusterName = "capacity";
const namespaces = 10;
const fieldManager = "myapp-bench";
const label = { "myapp-bench": "cluster-capacity" };
/** Creates in flight at once: a busy client, well inside what the apiserver's fairness lets through. */
const parallelism = 24;

const { values } = parseArgs({
  options: {
    instances: { type: "string", default: "10000" },
    stateful: { type: "string", default: "200" },
    keep: { type: "boolean", default: false },
    "no-record": { type: "boolean", default: false },
    "budget-minutes": { type: "string", default: "60" },
  },
});
const budgetMs = Number(values["budget-minutes"]) * 60_000;
const instances = Number(values.instances);
const stateful = Number(values.stateful);
if (!Number.isInteger(instances) || instances < 1 || !Number.isInteger(stateful) || stateful < 0) {
  throw new Error("--instances must be a positive integer and --stateful an integer >= 0");
}

const started = performance.now();
const elapsed = () => (performance.now() - started) / 1000;
const log = (message: string) => process.stderr.write(`[cluster-capacity ${elapsed().toFixed(0)}s] ${message}\n`);

type Workload = KubeObject & {
  spec: { replicas?: number };
  status?: { readyReplicas?: number; observedGeneration?: number };
  metadata: { generation?: number };
};

function children(index: number): KubeObject[] {
  const namespace = `cap-${index % namespaces}`;
  const name = `app-${index}`;
  const selector = { app: name };
  const template = {
    metadata: { labels: { ...label, ...selector } },
    spec: { containers: [{ name: "app", image: "registry.example/app:1", ports: [{ containerPort: 8080 }] }] },
  };
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, labels: label },
    spec: { selector, ports: [{ port: 8080, targetPort: 8080 }] },
  };
  const workload =
    index < stateful
      ? {
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          metadata: { name, namespace, labels: label },
          spec: {
            replicas: 1,
            serviceName: name,
            selector: { matchLabels: selector },
            template,
            volumeClaimTemplates: [
              {
                metadata: { name: "data" },
                spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
              },
            ],
          },
        }
      : {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name, namespace, labels: label },
          spec: { replicas: 1, selector: { matchLabels: selector }, template },
        };
  return [service, workload] as KubeObject[];
}

/** Creates one object; an overloaded apiserver's 504/5xx or a dropped connection is retried (the create may have
 * happened: then it is already there, which is fine). */
async function createOne(client: KubeClient, object: KubeObject): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.create(object, { fieldManager });
      return;
    } catch (error) {
      if (error instanceof ConflictError) return; // already there (a retried create, or a rerun with --keep)
      const transient =
        error instanceof ServerError || error instanceof TransportError || error instanceof TooManyRequestsError;
      if (!transient || attempt >= 8) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
}

let created = 0;

async function createAll(client: KubeClient, deadline: number): Promise<boolean> {
  let next = 0;
  const ticker = setInterval(() => log(`created ${created}/${instances * 2} objects`), 15_000);
  const worker = async () => {
    for (let index = next++; index < instances && Date.now() < deadline; index = next++) {
      for (const object of children(index)) {
        await createOne(client, object);
        created++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: parallelism }, worker));
  } finally {
    clearInterval(ticker);
  }
  return created === instances * 2;
}

interface Progress {
  readonly readyDeployments: number;
  readonly readyStatefulSets: number;
  readonly boundClaims: number;
}

async function progressOf(client: KubeClient): Promise<Progress> {
  let readyDeployments = 0;
  let readyStatefulSets = 0;
  let boundClaims = 0;
  const ready = (w: Workload) =>
    (w.status?.readyReplicas ?? 0) >= (w.spec.replicas ?? 1) &&
    (w.status?.observedGeneration ?? 0) >= (w.metadata.generation ?? 1);
  for (let n = 0; n < namespaces; n++) {
    const namespace = `cap-${n}`;
    const [deployments, statefulSets, claims] = await Promise.all([
      client.list<Workload>("apps/v1", "Deployment", { namespace }),
      client.list<Workload>("apps/v1", "StatefulSet", { namespace }),
      client.list<KubeObject & { status?: { phase?: string } }>("v1", "PersistentVolumeClaim", { namespace }),
    ]);
    readyDeployments += deployments.items.filter(ready).length;
    readyStatefulSets += statefulSets.items.filter(ready).length;
    boundClaims += claims.items.filter((c) => c.status?.phase === "Bound").length;
  }
  return { readyDeployments, readyStatefulSets, boundClaims };
}

/** VmRSS (now) and VmHWM (peak) of each local process of the cluster, MiB. */
async function memory(): Promise<Record<string, { rssMiB: number; peakMiB: number }>> {
  const status = await clusterStatus(clusterName);
  const processes = [
    ...status.components.filter((c) => c.running),
    ...(status.provisioner ? [{ name: "volume-provisioner", pid: status.provisioner.pid }] : []),
  ];
  const result: Record<string, { rssMiB: number; peakMiB: number }> = {};
  for (const { name, pid } of processes) {
    const proc = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(proc)?.[1] ?? NaN);
    result[name] = { rssMiB: Math.round(kib("VmRSS") / 1024), peakMiB: Math.round(kib("VmHWM") / 1024) };
  }
  return result;
}

function commit(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: benchDir, encoding: "utf8" }).trim();
    return git("rev-parse", "--short", "HEAD") + (git("status", "--porcelain") ? "+dirty" : "");
  } catch {
    return "unknown";
  }
}

const capacitySection: ResultsSection = {
  end: "<!-- cluster capacity runs end: new rows are inserted above this line -->",
  intro:
    "## Cluster capacity (bench/cluster-capacity.ts)\n\n" +
    "The local cluster holding a fleet: the children of N instances (Service + Deployment, S of them a StatefulSet\n" +
    "with a 1Gi claim instead) created directly, no operator, on a fresh local cluster; time until every workload\n" +
    "is Ready and every claim Bound, and the control plane's memory then. `npx node bench/cluster-capacity.ts`.\n\n" +
    "| run (UTC) | commit | machine | N | S | create s | all Ready s | apiserver MiB | etcd MiB | kcm MiB | scheduler MiB | kwok MiB | total MiB |\n" +
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
};

function record(result: Record<string, unknown> & { date: string }, row: string): void {
  writeFileSync(path.join(benchDir, "results/cluster-capacity.json"), JSON.stringify(result, null, 2) + "\n");
  insertIntoSection(path.join(benchDir, "RESULTS.md"), capacitySection, row, true);
}

async function main(): Promise<number> {
  const load = Math.round((loadavg()[0] ?? NaN) * 10) / 10;
  log(`${instances} instances (${stateful} with a StatefulSet + 1Gi claim) on a fresh cluster "${clusterName}"`);
  if ((await clusterStatus(clusterName)).exists && !values.keep) await clusterDown(clusterName);
  await clusterUp(clusterName);
  const client = new KubeClient(loadKubeConfig({ path: (await clusterStatus(clusterName)).kubeconfig }));
  try {
    for (let n = 0; n < namespaces; n++) {
      await client
        .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: `cap-${n}`, labels: label } })
        .catch((error: unknown) => {
          if (!(error instanceof ConflictError)) throw error;
        });
    }
    const t0 = performance.now();
    const deadline = Date.now() + budgetMs;
    const allCreated = await createAll(client, deadline);
    const createS = (performance.now() - t0) / 1000;
    if (allCreated) log(`all ${instances * 2} objects created in ${createS.toFixed(0)}s; waiting for Ready`);
    else log(`budget spent after ${created} of ${instances * 2} objects; measuring how far it got`);

    let last: Progress;
    for (;;) {
      last = await progressOf(client);
      const done =
        last.readyDeployments === instances - stateful &&
        last.readyStatefulSets === stateful &&
        last.boundClaims === stateful;
      log(
        `Ready: ${last.readyDeployments}/${instances - stateful} Deployments, ${last.readyStatefulSets}/${stateful} ` +
          `StatefulSets; ${last.boundClaims}/${stateful} claims Bound`,
      );
      if (done || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20_000));
    }
    const complete =
      allCreated &&
      last.readyDeployments === instances - stateful &&
      last.readyStatefulSets === stateful &&
      last.boundClaims === stateful;
    const readyS = (performance.now() - t0) / 1000;
    const rss = await memory();
    const totalMiB = Object.values(rss).reduce((sum, m) => sum + m.rssMiB, 0);
    log(
      `${complete ? "all Ready" : "INCOMPLETE (budget spent)"} ${readyS.toFixed(0)}s after the first create; ` +
        `memory (RSS MiB): ${JSON.stringify(rss)}`,
    );

    const date = new Date().toISOString();
    const machine = { cores: cpus().length, memoryGiB: Math.round(totalmem() / 1024 ** 3), loadAverage: load };
    const result = {
      date,
      commit: commit(),
      machine,
      cluster: { nodes: nodeCount, podsPerNode, serviceCidr },
      instances,
      statefulSets: stateful,
      complete,
      objectsCreated: created,
      ...last,
      createS: Math.round(createS),
      allReadyS: complete ? Math.round(readyS) : null,
      elapsedS: Math.round(readyS),
      memoryMiB: rss,
      totalRssMiB: totalMiB,
    };
    console.log(JSON.stringify(result, null, 2));
    if (!values["no-record"]) {
      const m = (name: string) => String(rss[name]?.rssMiB ?? "—");
      record(
        result,
        `| ${date.slice(0, 16).replace("T", " ")} | ${result.commit} | ${machine.cores} cores, ${machine.memoryGiB} GiB, ` +
          `load ${load} | ${instances} | ${stateful} | ${complete ? result.createS : `incomplete: ${created} objects created`} | ` +
          `${complete ? result.allReadyS : `${last.readyDeployments + last.readyStatefulSets} workloads Ready at ${result.elapsedS}`} | ${m("kube-apiserver")} | ` +
          `${m("etcd")} | ${m("kube-controller-manager")} | ${m("kube-scheduler")} | ${m("kwok-controller")} | ${totalMiB} |`,
      );
      log("recorded bench/results/cluster-capacity.json and a row in bench/RESULTS.md");
    }
    return complete ? 0 : 1;
  } finally {
    if (!values.keep) await clusterDown(clusterName);
  }
}

process.exit(await main());
