/**
 * The chaos suite's fleet: many instances in one namespace, created and changed in parallel, and the invariants
 * every scenario checks once the dust settles:
 * - every instance Ready at its generation, with its image rolled out;
 * - exactly one workload (of the kind its spec asks for) and one Service per instance, controlled by it;
 * - no orphaned or duplicated children; claims exactly as the reclaim policy says;
 * - no operator crashed (every exit was one of our signals);
 * - no hot loop and no writes once converged, and none on a restart of the converged fleet.
 */
import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import { apiVersion, governingServiceName, kind, serviceName, type MyAppInstanceSpecInput } from "../../api/index.ts";
import {
  ConflictError,
  GoneError,
  isTransient,
  UnauthorizedError,
  type KubeClient,
  type KubeObject,
} from "../../kube/index.ts";
import { labelKeys, managedBy } from "../../operator/desired/index.ts";
import { waitFor } from "../support/cluster.ts";
import { scrape, sum } from "../../bench/support/prometheus.ts";
import {
  instanceWrites,
  isReadyAtSpec,
  startOperator,
  type Instance,
  type OperatorProcess,
  type StartOperatorOptions,
} from "../support/operator.ts";

export interface FleetPlan {
  readonly namespace: string;
  readonly instances: number;
  /** The first `withStorage` instances get a 1Gi volume (a StatefulSet); the rest a Deployment. */
  readonly withStorage: number;
  readonly image: string;
}

export interface FleetMember {
  readonly name: string;
  readonly spec: MyAppInstanceSpecInput;
}

/** The members of a plan: `app-000`, ... with 1-2 replicas; storage ones alternate Retain/Delete reclaim. */
export function members(plan: FleetPlan): FleetMember[] {
  return Array.from({ length: plan.instances }, (_, i) => {
    const name = `app-${String(i).padStart(3, "0")}`;
    const storage = i < plan.withStorage;
    const spec: MyAppInstanceSpecInput = {
      replicas: 1 + (i % 2),
      image: plan.image,
      ...(storage ? { storage: "1Gi", storageReclaimPolicy: i % 2 === 0 ? "Retain" : "Delete" } : {}),
    };
    return { name, spec };
  });
}

/** Runs `task` over `items`, at most `parallelism` at once. */
export async function inParallel<T>(items: readonly T[], parallelism: number, task: (item: T) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, items.length) }, worker));
}

/**
 * Runs `request` until it succeeds, retrying what a client retries while the control plane is away (transport
 * errors, 5xx, 429, conflicts and 401s of an apiserver that cannot yet check tokens) for up to `timeoutMs`.
 */
export async function persistently<T>(request: () => Promise<T>, timeoutMs = 5 * 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await request();
    } catch (error) {
      if (!(isTransient(error) || error instanceof UnauthorizedError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/**
 * Creates every member (10 requests at once, as a large `pulumi up` sends them), persistently: a create whose
 * answer was lost to an outage and that is then found to exist counts as done.
 */
export async function createFleet(client: KubeClient, namespace: string, fleet: readonly FleetMember[]) {
  await inParallel(fleet, 10, (member) =>
    persistently(() =>
      client
        .create({ apiVersion, kind, metadata: { name: member.name, namespace }, spec: member.spec })
        .catch((error: unknown) => {
          if (error instanceof ConflictError && error.reason === "AlreadyExists") return undefined;
          throw error;
        }),
    ),
  );
}

/** Sets the image of every member (a rollout of the whole fleet), persistently. */
export async function rollOut(client: KubeClient, namespace: string, fleet: readonly FleetMember[], image: string) {
  await inParallel(fleet, 10, (member) =>
    persistently(() => client.mergePatch(apiVersion, kind, member.name, namespace, { spec: { image } })),
  );
}

/** Waits until every instance in `namespace` is Ready at its spec; returns when that was first seen. */
export async function awaitConverged(
  client: KubeClient,
  namespace: string,
  count: number,
  timeoutMs: number,
  slow?: { readonly afterMs: number; readonly report: (detail: string) => void },
) {
  let last: Instance[] = [];
  const started = performance.now();
  let reported = false;
  try {
    return await waitFor(
      `${count} instances Ready at their spec in ${namespace}`,
      async () => {
        last = (await client.list<Instance>(apiVersion, kind, { namespace })).items;
        if (last.length === count && last.every(isReadyAtSpec)) return performance.now();
        if (slow && !reported && performance.now() - started > slow.afterMs) {
          reported = true;
          slow.report(await laggingDetail(client, namespace, last));
        }
        return undefined;
      },
      { timeoutMs },
    );
  } catch (error) {
    const lagging = last.filter((instance) => !isReadyAtSpec(instance)).slice(0, 5);
    const detail = lagging.map((i) => `${i.metadata.name}: ${JSON.stringify(i.status?.conditions ?? [])}`);
    throw new Error(`${String(error)}\n${last.length} instances; not ready (first 5):\n${detail.join("\n")}`, {
      cause: error,
    });
  }
}

/**
 * Who is behind, for a convergence slower than expected: each lagging instance's conditions beside its workload's
 * generation and counts, so a run tells whether the operator or the cluster's own controllers were waiting.
 */
async function laggingDetail(client: KubeClient, namespace: string, instances: readonly Instance[]): Promise<string> {
  const lagging = instances.filter((instance) => !isReadyAtSpec(instance)).slice(0, 5);
  const labelSelector = `${labelKeys.managedBy}=${managedBy}`;
  const workloads = (
    await Promise.all(
      ["Deployment", "StatefulSet"].map(async (workloadKind) =>
        (await client.list<Workload>("apps/v1", workloadKind, { namespace, labelSelector })).items.map(
          (workload) => ({ ...workload, kind: workloadKind }), // list items carry no kind
        ),
      ),
    )
  ).flat();
  const pods = lagging.length ? (await client.list<Pod>("v1", "Pod", { namespace })).items : [];
  const lines = lagging.map((instance) => {
    const workload = workloads.find((w) => w.metadata.name === instance.metadata.name);
    const workloadState = workload
      ? `${workload.kind} generation ${workload.metadata.generation} ${JSON.stringify(workload.status ?? {})}`
      : "no workload";
    const conditions = (instance.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}`);
    // Its pods as the cluster stores them: a rollout that stands still shows here whether a pod waits to be
    // deleted, created or made Ready (the kubelet's part), or the workload's controller did not act on them.
    const ownPods = pods
      .filter((pod) => (pod.metadata.name ?? "").startsWith(`${instance.metadata.name}-`))
      .map(podState);
    return `${instance.metadata.name} (generation ${instance.metadata.generation}): ${conditions.join(", ")}; ${workloadState}; pods ${ownPods.join(" ")}`;
  });
  return `converging is slow: ${lagging.length} of ${instances.length} not Ready at their spec\n${lines.join("\n")}`;
}

type Workload = KubeObject & { status?: Record<string, unknown> };
type Pod = KubeObject & {
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: readonly { type: string; status: string; reason?: string; message?: string }[];
  };
};

/**
 * `name[revision phase ready node deleting]` of a pod, for {@link laggingDetail}. A pod with no node says what the
 * scheduler last said about it (or that it has not tried): the scheduler's part, not the kubelet's.
 */
function podState(pod: Pod): string {
  const labels = pod.metadata.labels ?? {};
  const revision = labels["controller-revision-hash"] ?? labels["pod-template-hash"] ?? "?";
  const ready = pod.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "?";
  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  const node = pod.spec?.nodeName
    ? ` on ${pod.spec.nodeName}`
    : ` unscheduled (${scheduled ? `${scheduled.reason ?? scheduled.status}: ${scheduled.message ?? ""}` : "not tried"})`;
  const deleting = pod.metadata.deletionTimestamp ? ` deleting since ${pod.metadata.deletionTimestamp}` : "";
  return `${pod.metadata.name}[${revision} ${pod.status?.phase ?? "?"} Ready=${ready}${node}${deleting}]`;
}
type Child = KubeObject & { spec?: { replicas?: number } };
type Claim = KubeObject & { status?: { phase?: string } };

/** What the invariant check found, for the results. */
export interface FleetCheck {
  readonly instances: number;
  readonly workloads: number;
  readonly services: number;
  readonly claims: number;
}

/**
 * Asserts the structural invariants of a converged namespace: one workload of the right kind and one Service per
 * instance (two with storage: the StatefulSet's headless governing Service too), each controlled by it; no child without a live owner; `expectedClaims` claims (all Bound).
 */
export async function checkFleet(client: KubeClient, namespace: string, expectedClaims: number): Promise<FleetCheck> {
  const instances = (await client.list<Instance>(apiVersion, kind, { namespace })).items;
  const labelSelector = `${labelKeys.managedBy}=${managedBy}`;
  const children = async (childKind: string, childApiVersion: string) =>
    (await client.list<Child>(childApiVersion, childKind, { namespace, labelSelector })).items;
  const deployments = await children("Deployment", "apps/v1");
  const statefulSets = await children("StatefulSet", "apps/v1");
  const services = await children("Service", "v1");
  const owner = (child: KubeObject) => child.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;
  const uids = new Set(instances.map((i) => i.metadata.uid));
  for (const child of [...deployments, ...statefulSets, ...services]) {
    assert.ok(uids.has(owner(child)), `${child.kind} ${child.metadata.name} has no live controller instance (orphan)`);
  }
  for (const instance of instances) {
    assert.ok(isReadyAtSpec(instance), `${instance.metadata.name} is Ready at its spec`);
    const uid = instance.metadata.uid;
    const mine = (list: Child[]) => list.filter((child) => owner(child) === uid);
    const [want, other] = instance.spec.storage ? [statefulSets, deployments] : [deployments, statefulSets];
    assert.equal(mine(want).length, 1, `${instance.metadata.name}: exactly one workload of the right kind`);
    assert.equal(mine(other).length, 0, `${instance.metadata.name}: no workload of the other kind`);
    // A StatefulSet also has its headless governing Service (per-pod DNS names).
    const serviceNames = mine(services)
      .map((service) => service.metadata.name)
      .sort();
    const name = instance.metadata.name ?? "";
    const wanted = [serviceName(name)];
    if (instance.spec.storage) wanted.push(governingServiceName(name));
    assert.deepEqual(serviceNames, wanted.sort(), `${instance.metadata.name}: exactly its Service(s)`);
  }
  const claims = (await client.list<Claim>("v1", "PersistentVolumeClaim", { namespace })).items;
  assert.equal(claims.length, expectedClaims, "claims: exactly the expected number, none duplicated or lost");
  for (const claim of claims) assert.equal(claim.status?.phase, "Bound", `claim ${claim.metadata.name} is Bound`);
  return {
    instances: instances.length,
    workloads: deployments.length + statefulSets.length,
    services: services.length,
    claims: claims.length,
  };
}

/** Claims a fleet of these members should have: one per replica of each storage member. */
export function claimsOf(fleet: readonly FleetMember[]): number {
  return fleet.filter((m) => m.spec.storage).reduce((total, m) => total + (m.spec.replicas ?? 1), 0);
}

/** Reconciles and writes of `operator` over `windowMs` of quiet (nothing changes): both should be about 0. */
export async function quietWindow(operator: OperatorProcess, windowMs: number) {
  const reconciles = async () => sum(await scrape(operator.metricsUrl), "controller_runtime_reconcile_total");
  // The window opens once the converging reconcile's own trailing writes landed; then 20 s must stay silent.
  await settledWrites(operator);
  const [writes0, reconciles0] = [await instanceWrites(operator), await reconciles()];
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  return { writes: (await instanceWrites(operator)) - writes0, reconciles: (await reconciles()) - reconciles0 };
}

/**
 * The operator's instance writes once a converged fleet's trailing writes have landed: its queue empty and no
 * write for two looks 2 s apart in a row (for at most 60 s): a lifecycle event follows the status a watcher saw by
 * a few milliseconds (fire-and-forget), later on a busy machine.
 */
export async function settledWrites(operator: OperatorProcess): Promise<number> {
  const queued = async () => sum(await scrape(operator.metricsUrl), "workqueue_depth");
  let settled = await instanceWrites(operator);
  let quietLooks = 0;
  for (let tries = 0; tries < 30 && quietLooks < 2; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const writes = await instanceWrites(operator);
    quietLooks = writes === settled && (await queued()) === 0 ? quietLooks + 1 : 0;
    settled = writes;
  }
  return settled;
}

/**
 * Starts a fresh operator on a converged fleet and counts its writes once its first reconcile of every key is
 * done (the initial list enqueues all of them): a converged fleet must cost 0.
 */
export async function restartWrites(t: TestContext, options: StartOperatorOptions, keys: number) {
  const operator = await startOperator(t, options);
  await waitFor("the restarted operator to reconcile every instance once", async () => {
    const done = operator.logs.filter((line) => line.msg === "reconciled").length;
    return done >= keys ? true : undefined;
  });
  const writes = await instanceWrites(operator);
  return { operator, writes };
}

/** Asserts that every exit of `operators` was one we caused (SIGKILL from the storm, or a clean stop). */
export async function assertNoCrash(operators: readonly OperatorProcess[], killed: ReadonlySet<OperatorProcess>) {
  for (const operator of operators) {
    if (killed.has(operator)) continue;
    const exited = await Promise.race([operator.exited, Promise.resolve(undefined)]);
    assert.equal(exited, undefined, `operator ${operator.identity} crashed: ${operator.logTail()}`);
  }
}

/** Every condition of type `Degraded` or `Stalled` seen True on any instance of a namespace, while recording. */
export interface ConditionLog {
  readonly seen: { readonly name: string; readonly type: string; readonly reason: string; readonly message: string }[];
  stop(): Promise<void>;
}

/** Watches every instance of `namespace` (resuming where a watch ended) and logs Degraded/Stalled = True. */
export async function watchProblems(client: KubeClient, namespace: string): Promise<ConditionLog> {
  const seen: { name: string; type: string; reason: string; message: string }[] = [];
  const abort = new AbortController();
  const note = (instance: Instance) => {
    for (const condition of instance.status?.conditions ?? []) {
      if ((condition.type === "Degraded" || condition.type === "Stalled") && condition.status === "True") {
        seen.push({
          name: instance.metadata.name ?? "",
          type: condition.type,
          reason: condition.reason,
          message: condition.message ?? "",
        });
      }
    }
  };
  // A list notes what is already there; after a 410 (an apiserver restarted with a fresh watch cache) the watch
  // resumes from a new list, so no version between is lost unseen.
  const relist = async () => {
    const listed = await client.list<Instance>(apiVersion, kind, { namespace });
    for (const instance of listed.items) note(instance);
    return listed.metadata.resourceVersion;
  };
  let resourceVersion = await relist();
  const loop = (async () => {
    while (!abort.signal.aborted) {
      try {
        for await (const event of client.watch<Instance>(apiVersion, kind, {
          namespace,
          ...(resourceVersion ? { resourceVersion } : {}),
          allowWatchBookmarks: true,
          timeoutSeconds: 60,
          signal: abort.signal,
        })) {
          resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
          note(event.object);
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
        if (error instanceof GoneError) resourceVersion = await relist().catch(() => resourceVersion);
      }
    }
  })();
  return {
    seen,
    stop: async () => {
      abort.abort();
      await loop;
    },
  };
}
