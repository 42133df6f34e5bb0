/**
 * Where an operator runs for the local cluster, for `npm run cluster -- status`: the local processes of this
 * checkout (`npm start` records its operator in .local/operator.json; `npm run operator` runs in the foreground and
 * records nothing, so both are found by their command line, `tools/operator.ts`, and working directory), each with
 * its /readyz; and the operator Deployments the component installed in the cluster, with their readiness.
 */
import { readdirSync } from "node:fs";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { operatorRecord } from "./operator-process.ts";
import { repoRoot } from "./paths.ts";
import { processArgv, processCwd, processParent } from "./process-record.ts";

export interface LocalOperator {
  readonly pid: number;
  /** `npm start` (recorded, in the background) or `npm run operator` (in a terminal). */
  readonly startedBy: "npm start" | "npm run operator";
  /** Where its /healthz and /readyz answer. */
  readonly probe: string;
  /** "ok", or why not (the HTTP status and body, or "unreachable: ..."). */
  readonly readyz: string;
}

export interface InClusterOperator {
  readonly namespace: string;
  readonly name: string;
  readonly readyReplicas: number;
  readonly replicas: number;
  readonly image: string;
}

/** The labels every operator Deployment of the component carries (components/metadata.ts). */
export const operatorSelector = "app.kubernetes.io/component=operator,app.kubernetes.io/part-of=myapp-platform";

/** A process as {@link operatorProcesses} sees it. */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number | undefined;
  readonly argv: readonly string[];
}

/**
 * The pids of the operators among `processes` (of this checkout): those given `tools/operator.ts` as an argument
 * of its own, as node is, and not npm's shell (`sh -c "node tools/operator.ts ..."` holds it inside its one
 * command argument; matched by the whole command line, one `npm run operator` was shown twice). Of a wrapper that
 * passes the script on as its own argument (`npx tsx tools/operator.ts`) and the node it starts, only the last.
 * Pure.
 */
export function operatorProcesses(processes: readonly ProcessEntry[]): number[] {
  const isScript = (arg: string) => arg === "tools/operator.ts" || arg.endsWith("/tools/operator.ts");
  const matched = processes.filter((p) => p.argv.slice(1).some(isScript));
  const parents = new Set(matched.map((p) => p.ppid));
  return matched.filter((p) => !parents.has(p.pid)).map((p) => p.pid);
}

/** The operators of this checkout running as local processes, the recorded one (`npm start`) first. */
export async function localOperators(): Promise<LocalOperator[]> {
  const recorded = operatorRecord();
  const ours: ProcessEntry[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid || processCwd(pid) !== repoRoot) continue;
    ours.push({ pid, ppid: processParent(pid), argv: processArgv(pid) });
  }
  const pids = new Set<number>([...(recorded ? [recorded.pid] : []), ...operatorProcesses(ours)]);
  return Promise.all(
    [...pids].map(async (pid) => {
      const probe = recorded?.pid === pid ? `127.0.0.1:${recorded.probePort}` : probeAddress(processArgv(pid));
      return {
        pid,
        startedBy: recorded?.pid === pid ? ("npm start" as const) : ("npm run operator" as const),
        probe,
        readyz: await readyz(probe),
      };
    }),
  );
}

/**
 * Where a local operator's probes answer, from its flags (`--health-probe-bind-address=[H]:P`, default `:8081`);
 * an address on every interface is asked on 127.0.0.1.
 */
export function probeAddress(argv: readonly string[]): string {
  const flag = "--health-probe-bind-address";
  const index = argv.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
  const value =
    index < 0 ? ":8081" : argv[index]!.includes("=") ? argv[index]!.split("=")[1]! : (argv[index + 1] ?? "");
  const match = /^(.*):(\d+)$/.exec(value);
  const host = !match?.[1] || match[1] === "0.0.0.0" ? "127.0.0.1" : match[1];
  return `${host}:${match?.[2] ?? "8081"}`;
}

/** GET /readyz: "ok", or what was said instead. */
async function readyz(address: string): Promise<string> {
  try {
    const response = await fetch(`http://${address}/readyz`, { signal: AbortSignal.timeout(2000) });
    // "ok", or one "[+]/[-]check: detail" line per check, as the apiserver's: the failed ones say why.
    const lines = (await response.text()).trim().split("\n");
    if (response.ok) return "ok";
    const failed = lines.filter((line) => line.startsWith("[-]"));
    return `HTTP ${response.status}: ${(failed.length > 0 ? failed : lines).join("; ")}`;
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return `unreachable: ${cause}`;
  }
}

type Deployment = KubeObject & {
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: { readyReplicas?: number };
};

/** The operator Deployments in the cluster of `kubeconfig` (every namespace), by the component's labels. */
export async function inClusterOperators(kubeconfig: string): Promise<InClusterOperator[]> {
  const client = new KubeClient(loadKubeConfig({ path: kubeconfig }));
  try {
    const { items } = await client.list<Deployment>("apps/v1", "Deployment", { labelSelector: operatorSelector });
    return items.map((deployment) => ({
      namespace: deployment.metadata.namespace ?? "",
      name: deployment.metadata.name ?? "",
      readyReplicas: deployment.status?.readyReplicas ?? 0,
      replicas: deployment.spec?.replicas ?? 1,
      image: deployment.spec?.template?.spec?.containers?.[0]?.image ?? "?",
    }));
  } finally {
    await client.close();
  }
}

/**
 * The status lines about operators. On this local cluster (kwok) a pod never runs, it is only marked Ready, so an
 * in-cluster Deployment is said to be simulated: only a local process reconciles here.
 */
export function operatorLines(
  local: readonly LocalOperator[],
  inCluster: readonly InClusterOperator[] | string,
): string[] {
  const lines = local.map(
    (o) =>
      `${"operator (local)".padEnd(24)} pid ${String(o.pid).padEnd(8)} ${o.startedBy}, /readyz on ${o.probe}: ${o.readyz}`,
  );
  if (local.length === 0) {
    lines.push(
      `${"operator (local)".padEnd(24)} none running: nothing reconciles here (npm start, or npm run operator)`,
    );
  }
  if (typeof inCluster === "string") lines.push(`${"operator (in-cluster)".padEnd(24)} ${inCluster}`);
  else {
    for (const o of inCluster) {
      lines.push(
        `${"operator (in-cluster)".padEnd(24)} ${o.namespace}/${o.name} ${o.readyReplicas}/${o.replicas} ready, ${o.image} ` +
          "(simulated by kwok: its pods never run here)",
      );
    }
  }
  return lines;
}
