/**
 * Test support for the operator as a real process against the local cluster: the CRD installed, `node
 * operator/main.ts` started by the shared launcher (tools/lib/operator-launcher.ts) with leader election and every
 * chart kind, scoped to a test's namespaces and stopped when the test ends, its /metrics read; plus the few
 * MyAppInstance helpers the operator tests share (create, wait for a status, record every status change).
 *
 * Set MYAPP_TEST_OPERATOR_LOGS=1 to copy every operator log line to stderr while a test runs.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import type { TestContext } from "node:test";
import { parse } from "yaml";
import {
  apiVersion,
  chartKindName,
  crdName,
  findCondition,
  kind,
  renderableChartKinds,
  type Condition,
  type MyAppInstanceSpecInput,
  type MyAppInstanceStatus,
} from "../../api/index.ts";
import { crdPath } from "../../api/crd-path.ts";
import { GoneError, TransportError, type KubeClient, type KubeObject } from "../../kube/index.ts";
import { launchOperator, type Exit, type LogLine } from "../../tools/lib/operator-launcher.ts";
import { scrape, sum } from "../../bench/support/prometheus.ts";
import { adminClient, waitFor, type Typed } from "./cluster.ts";

const testFieldManager = "myapp-test";

export type { Exit, LogLine };

/** True when `line` is the operator's line about a reconcile whose writes include `change` ("status Degraded"). */
export function reconcileChanged(line: LogLine, change: string): boolean {
  return line.msg === "reconciled" && Array.isArray(line["changes"]) && line["changes"].includes(change);
}

export interface OperatorProcess {
  readonly process: ChildProcess;
  /** The process's identity (Lease holder), from its "operator starting" line. */
  readonly identity: string;
  /** `http://127.0.0.1:PORT/metrics` */
  readonly metricsUrl: string;
  /** `http://127.0.0.1:PORT` of /healthz and /readyz */
  readonly probeUrl: string;
  /** Every line so far, stdout and stderr, in arrival order. */
  readonly logs: readonly LogLine[];
  /** Resolves with the process's exit, whenever it comes. */
  readonly exited: Promise<Exit>;
  /** The first line (already logged or still to come) that satisfies `predicate`. */
  waitForLog(predicate: (line: LogLine) => boolean, options?: { timeoutMs?: number; what?: string }): Promise<LogLine>;
  /** SIGTERM, then waits for the exit (SIGKILL if it does not come within 30 s). */
  stop(): Promise<Exit>;
  /** SIGKILL: no chance to release the lease or finish anything. */
  kill(): Promise<Exit>;
  /** The last log lines (and the exit, if any), for an error message that explains a failure. */
  logTail(): string;
}

export interface StartOperatorOptions {
  /** Watched namespaces (--namespaces); required, so a test never touches other people's objects. */
  readonly namespaces: readonly string[];
  /**
   * Leader election on a Lease in the first namespace. Processes of one test share it by default, so a second
   * process is a standby; `false` runs without leader election.
   * @default { namespace: namespaces[0], id: "myapp-operator-<namespaces[0]>" }
   */
  readonly leaderElection?: { readonly namespace: string; readonly id: string } | false;
  /**
   * More flags, e.g. `--resync-period=2`. Without a `--chart-kinds` among them the operator may render every kind
   * charts can render (the example chart has a ConfigMap): a platform that opted into all of them, as the tests run
   * the operator on the admin's credentials. The default's narrow list is the least-privilege tests' concern.
   */
  readonly args?: readonly string[];
  /** A name for this process in diagnostics (defaults to "operator"). */
  readonly label?: string;
  /** Installs the CRD and cleans up after the test. @default adminClient() */
  readonly client?: KubeClient;
  /** More environment for the process, over the test's own (e.g. NODE_OPTIONS with a preload). */
  readonly env?: Readonly<Record<string, string>>;
}

/** The CRD's installation, once per cluster (by its server URL) and test process. */
const crdReady = new Map<string, Promise<void>>();

/**
 * Installs the committed CRD (server-side apply as "myapp-test", forced) and waits until it is Established and
 * served. Once per cluster and test process.
 */
export function ensureCrd(client: KubeClient): Promise<void> {
  const server = client.config.getCurrentCluster()?.server ?? "";
  let ready = crdReady.get(server);
  if (!ready) {
    ready = installCrd(client).catch((error: unknown) => {
      crdReady.delete(server);
      throw error;
    });
    crdReady.set(server, ready);
  }
  return ready;
}

async function installCrd(client: KubeClient): Promise<void> {
  const crd = parse(readFileSync(crdPath, "utf8")) as KubeObject;
  await client.apply(crd, { fieldManager: testFieldManager, force: true });
  await waitFor(
    `CRD ${crdName} to be Established`,
    async () => {
      const live = await client.get<Typed<{ status?: { conditions?: Condition[] } }>>(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        crdName,
      );
      return findCondition(live.status?.conditions, "Established")?.status === "True" ? true : undefined;
    },
    { timeoutMs: 60_000 },
  );
  // Established can come a moment before the resource is served: a list succeeds once it is.
  await waitFor(`${kind} to be served`, async () => (await client.list(apiVersion, kind, { limit: 1 })) && true, {
    timeoutMs: 60_000,
  });
}

const allChartKindsFlag = `--chart-kinds=${renderableChartKinds.map(chartKindName).join(",")}`;

/**
 * Starts `node operator/main.ts` with free ports and the given namespaces, and resolves once it logged
 * "operator starting" (so its ports are known). The process is stopped (SIGTERM, then SIGKILL) when the test ends,
 * after which the finalizers of instances left in its namespaces are removed, so the namespaces can go.
 */
export async function startOperator(t: TestContext, options: StartOperatorOptions): Promise<OperatorProcess> {
  const { namespaces } = options;
  const client = options.client ?? adminClient();
  const first = namespaces[0];
  if (first === undefined) throw new Error("startOperator: pass namespaces: a test's operator must not watch all");
  await ensureCrd(client);
  const election =
    options.leaderElection === false
      ? undefined
      : (options.leaderElection ?? { namespace: first, id: `myapp-operator-${first}` });
  const label = options.label ?? "operator";
  const echo = process.env.MYAPP_TEST_OPERATOR_LOGS === "1";
  const operator = launchOperator({
    namespaces,
    args: [
      ...(election
        ? ["--leader-elect", `--leader-election-namespace=${election.namespace}`, `--leader-election-id=${election.id}`]
        : []),
      ...(options.args?.some((arg) => arg.startsWith("--chart-kinds")) ? [] : [allChartKindsFlag]),
      ...(options.args ?? []),
    ],
    // The admin kubeconfig of the test run (KUBECONFIG): RBAC of the operator's role is the component tests' concern.
    env: { ...process.env, ...options.env },
    label,
    onLine: echo ? (text, pid) => process.stderr.write(`[${label} ${String(pid)}] ${text}\n`) : undefined,
  });
  const stop = () => operator.stop(30_000);

  t.after(async () => {
    await stop();
    await releaseInstances(client, namespaces);
  });

  const started = await operator.started({ timeoutMs: 60_000 });
  return {
    process: operator.child,
    identity: started.identity,
    metricsUrl: started.metricsUrl,
    probeUrl: started.probeUrl,
    logs: operator.logs,
    exited: operator.exited,
    waitForLog: (predicate, wait) => operator.waitForLog(predicate, wait),
    stop,
    kill: operator.kill,
    logTail: () => operator.tail(),
  };
}

/** Removes every finalizer from the instances in `namespaces`, so deleting the namespaces never hangs on them. */
async function releaseInstances(client: KubeClient, namespaces: readonly string[]): Promise<void> {
  for (const namespace of namespaces) {
    const { items } = await client.list(apiVersion, kind, { namespace }).catch(() => ({ items: [] as KubeObject[] }));
    for (const item of items) {
      if (!item.metadata.finalizers?.length) continue;
      await client
        .mergePatch(apiVersion, kind, item.metadata.name ?? "", namespace, { metadata: { finalizers: null } })
        .catch(() => undefined);
    }
  }
}

// ---- metrics ----

/**
 * API writes the operator made for instances: `myapp_operator_api_writes_total` summed over every kind but Lease.
 * Lease renewals (every 2 s while leading) are the price of leader election, not of any instance.
 */
export async function instanceWrites(operator: OperatorProcess): Promise<number> {
  return sum(await scrape(operator.metricsUrl), "myapp_operator_api_writes_total", (labels) => labels.kind !== "Lease");
}

// ---- instances ----

export type Instance = Typed<{ spec: MyAppInstanceSpecInput; status?: MyAppInstanceStatus }>;

/** Resolves never; rejects, with the operator's last lines, if it exits: race a test's waits against it. */
export function exitOf(operator: OperatorProcess): Promise<never> {
  return operator.exited.then((exited) => {
    throw new Error(`the operator exited (${JSON.stringify(exited)}): ${operator.logTail()}`);
  });
}

/** Creates a MyAppInstance. */
export function createInstance(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: MyAppInstanceSpecInput,
): Promise<Instance> {
  return client.create<Instance>({ apiVersion, kind, metadata: { name, namespace }, spec });
}

/** Merge-patches the spec of an instance. */
export function patchSpec(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: Partial<MyAppInstanceSpecInput>,
): Promise<Instance> {
  return client.mergePatch<Instance>(apiVersion, kind, name, namespace, { spec });
}

export function getInstance(client: KubeClient, namespace: string, name: string): Promise<Instance> {
  return client.get<Instance>(apiVersion, kind, name, namespace);
}

/** The condition `type` of an instance. */
export function conditionOf(instance: Instance, type: string): Condition | undefined {
  return findCondition(instance.status?.conditions, type);
}

/** True when the status describes the current spec (observedGeneration caught up with metadata.generation). */
export function isCurrent(instance: Instance): boolean {
  return instance.status?.observedGeneration === instance.metadata.generation;
}

/**
 * True when the instance is Ready for its current spec with every replica ready, and status.image is the spec's
 * image (the rollout is complete).
 */
export function isReadyAtSpec(instance: Instance): boolean {
  const ready = conditionOf(instance, "Ready");
  return (
    isCurrent(instance) &&
    ready?.status === "True" &&
    ready.observedGeneration === instance.metadata.generation &&
    instance.status?.readyReplicas === (instance.spec.replicas ?? 1) &&
    instance.status?.image === instance.spec.image
  );
}

/** Polls the instance until `predicate` holds; returns it. The error says what the status was at the deadline. */
export async function waitForInstance(
  client: KubeClient,
  namespace: string,
  name: string,
  what: string,
  predicate: (instance: Instance) => boolean,
  timeoutMs = 90_000,
): Promise<Instance> {
  let last: Instance | undefined;
  try {
    return await waitFor(
      `${namespace}/${name} ${what}`,
      async () => {
        last = await getInstance(client, namespace, name);
        return predicate(last) ? last : undefined;
      },
      { timeoutMs },
    );
  } catch (error) {
    const status = last ? JSON.stringify({ generation: last.metadata.generation, status: last.status }) : "none";
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nlast seen: ${status}`, {
      cause: error,
    });
  }
}

/** Waits until a namespaced object is gone. */
export async function waitForGone(
  client: KubeClient,
  apiVersionOf: string,
  kindOf: string,
  namespace: string,
  name: string,
  timeoutMs = 60_000,
): Promise<void> {
  await waitFor(
    `${kindOf} ${namespace}/${name} to be gone`,
    async () => ((await client.find(apiVersionOf, kindOf, name, namespace)) ? undefined : true),
    { timeoutMs },
  );
}

/** Pods of an instance (by its status.selector) that are not terminating, and how many of them are Ready. */
export async function podsOf(
  client: KubeClient,
  namespace: string,
  selector: string,
): Promise<{ pods: Pod[]; ready: number }> {
  const { items } = await client.list<Pod>("v1", "Pod", { namespace, labelSelector: selector });
  const pods = items.filter((pod) => !pod.metadata.deletionTimestamp);
  const ready = pods.filter((pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
  return { pods, ready: ready.length };
}

export type Pod = Typed<{
  spec?: { containers?: { name: string; image?: string }[]; nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}>;

/** Every version of one instance as a watch delivers them, from the moment `recordInstance` returns. */
export interface InstanceRecording {
  readonly versions: readonly Instance[];
  /**
   * Ends the watch; resolves once it stopped. Given `seen` (a version read elsewhere, say by a wait), it first waits
   * until the watch has delivered that very version: a watch may lag a GET, and its last writes would be missed.
   */
  stop(seen?: KubeObject): Promise<void>;
}

/**
 * Watches one instance and records every version of it (each status write is one). The watch starts from the
 * version current when this is called, so nothing written after that is missed however late the request lands;
 * when a watch request ends it resumes where it left off.
 */
export async function recordInstance(
  client: KubeClient,
  namespace: string,
  name: string,
  t?: TestContext,
): Promise<InstanceRecording> {
  const versions: Instance[] = [];
  const abort = new AbortController();
  // A test that fails before it stops the recording must not leave its watch keeping the test file alive.
  t?.after(() => abort.abort());
  const current = await getInstance(client, namespace, name);
  let resourceVersion = current.metadata.resourceVersion ?? "";
  let failure: unknown;
  const loop = (async () => {
    while (!abort.signal.aborted) {
      try {
        for await (const event of client.watch<Instance>(apiVersion, kind, {
          namespace,
          fieldSelector: `metadata.name=${name}`,
          resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: 60,
          signal: abort.signal,
        })) {
          resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
          if (event.type === "ADDED" || event.type === "MODIFIED") versions.push(event.object);
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        if (error instanceof GoneError || !(error instanceof TransportError)) {
          // A recording with a hole would let a test pass on missing evidence: fail loudly instead.
          failure = error;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  })();
  return {
    versions,
    stop: async (seen) => {
      const wanted = seen?.metadata.resourceVersion;
      if (wanted !== undefined && failure === undefined) {
        await waitFor(
          `the watch of instance ${namespace}/${name} to deliver version ${wanted}`,
          async () => failure !== undefined || versions.some((v) => v.metadata.resourceVersion === wanted) || undefined,
          { timeoutMs: 60_000, intervalMs: 100 },
        );
      }
      abort.abort();
      await loop;
      if (failure) throw new Error(`the watch of instance ${namespace}/${name} failed`, { cause: failure });
    },
  };
}
