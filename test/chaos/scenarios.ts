/**
 * The chaos scenarios, each a function of its size so `npm run chaos` runs them at full size and `npm test` a
 * smoke of the same code. Each converges, checks the fleet's invariants (fleet.ts) and returns its figures.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { apiVersion, chartKindName, defaultChartKinds, kind } from "../../api/index.ts";
import type { KubeClient } from "../../kube/index.ts";
import { localDir } from "../../tools/lib/paths.ts";
import { testNamespace, waitFor } from "../support/cluster.ts";
import { rotatingToken } from "../support/rotating-token.ts";
import { instanceWrites, startOperator, type Instance, type OperatorProcess } from "../support/operator.ts";
import { startBrownoutProxy } from "./brownout-proxy.ts";
import { ownCluster, type ControlPlaneComponent } from "./control-plane.ts";
import {
  assertNoCrash,
  awaitConverged,
  checkFleet,
  claimsOf,
  createFleet,
  inParallel,
  members,
  quietWindow,
  restartWrites,
  rollOut,
  settledWrites,
  watchProblems,
  type FleetMember,
} from "./fleet.ts";

/** Figures of one scenario run, as recorded in RESULTS.md. */
export type Figures = Record<string, number | string>;

const minutes = (n: number) => n * 60_000;
const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** Two decimals of writes per instance. */
const perInstance = (writes: number, instances: number) => Math.round((writes / instances) * 100) / 100;

/**
 * The API writes `operator` makes for instances in the `windowMs` from now (the first minute after an outage ends,
 * say: what the recovery costs the apiserver that just came back). Resolves when the window closes.
 */
function writesWithin(operator: OperatorProcess, windowMs: number): Promise<number> {
  const counted = (async () => {
    const before = await instanceWrites(operator);
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    return (await instanceWrites(operator)) - before;
  })();
  // Awaited once the scenario has converged; a scenario failing first must not leave it rejecting unhandled.
  counted.catch(() => undefined);
  return counted;
}

/**
 * The writes an undisturbed rollout of the converged `fleet` costs, from the first patch until its trailing writes
 * landed: the work a recovery cannot avoid, beside which an outage's own cost is read.
 */
async function undisturbedRolloutWrites(
  client: KubeClient,
  operator: OperatorProcess,
  namespace: string,
  fleet: readonly FleetMember[],
  image: string,
): Promise<number> {
  const before = await settledWrites(operator);
  await rollOut(client, namespace, fleet, image);
  await awaitConverged(client, namespace, fleet.length, minutes(10));
  return (await settledWrites(operator)) - before;
}

export interface StormSize {
  readonly instances: number;
  readonly withStorage: number;
  readonly kills: number;
  /** Time between kills (jittered ±50 %). */
  readonly killIntervalMs: number;
}

/**
 * SIGKILL storm during create and rollout: `kills` SIGKILLs of the operator, each followed by an immediate
 * restart, half while the fleet is being created and half while its image rolls out. Then: converged (time from
 * the last kill), the invariants, no hot loop, and 0 writes on a restart of the converged fleet.
 */
export async function sigkillStorm(t: TestContext, client: KubeClient, size: StormSize): Promise<Figures> {
  const namespace = await testNamespace(t, client, "chaos-storm");
  const fleet = members({ namespace, instances: size.instances, withStorage: size.withStorage, image: "nginx:1.27" });
  const options = { namespaces: [namespace], leaderElection: false as const, label: "storm" };
  const operators: OperatorProcess[] = [];
  const killed = new Set<OperatorProcess>();
  let current = await startOperator(t, options);
  operators.push(current);

  const storm = async (kills: number) => {
    for (let i = 0; i < kills; i++) {
      await new Promise((resolve) => setTimeout(resolve, size.killIntervalMs * (0.5 + Math.random())));
      killed.add(current);
      await current.kill();
      current = await startOperator(t, options);
      operators.push(current);
    }
  };
  const started = performance.now();
  const firstHalf = Math.ceil(size.kills / 2);
  await Promise.all([createFleet(client, namespace, fleet), storm(firstHalf)]);
  await Promise.all([rollOut(client, namespace, fleet, "nginx:1.28"), storm(size.kills - firstHalf)]);
  const lastKill = performance.now();
  const convergedAt = await awaitConverged(client, namespace, fleet.length, minutes(15));
  const check = await checkFleet(client, namespace, claimsOf(fleet));
  const quiet = await quietWindow(current, 20_000);
  assert.equal(quiet.writes, 0, "no writes once converged");
  assert.ok(quiet.reconciles <= fleet.length, `no hot loop: ${quiet.reconciles} reconciles in 20 s of quiet`);
  await assertNoCrash(operators, killed);
  killed.add(current);
  await current.stop();
  const restart = await restartWrites(t, options, fleet.length);
  assert.equal(restart.writes, 0, "a restart of the converged fleet writes nothing");
  await assertNoCrash([restart.operator], new Set());
  return {
    instances: fleet.length,
    withStorage: size.withStorage,
    kills: size.kills,
    convergedAfterLastKillS: seconds(convergedAt - lastKill),
    totalS: seconds(convergedAt - started),
    claims: check.claims,
    quietReconciles: quiet.reconciles,
    restartWrites: restart.writes,
  };
}

export interface DeleteSize {
  readonly instances: number;
  readonly withStorage: number;
}

/**
 * Delete while the operator is down: the whole fleet is deleted while no operator runs (those without storage,
 * which have no finalizer, go at once); once one starts, every instance is gone (finalizer run), children are
 * collected, and claims are kept or deleted exactly as each instance's reclaim policy said.
 */
export async function deleteWhileDown(t: TestContext, client: KubeClient, size: DeleteSize): Promise<Figures> {
  const namespace = await testNamespace(t, client, "chaos-delete");
  const fleet = members({ namespace, instances: size.instances, withStorage: size.withStorage, image: "nginx:1.27" });
  const options = { namespaces: [namespace], leaderElection: false as const, label: "delete" };
  const first = await startOperator(t, options);
  await createFleet(client, namespace, fleet);
  await awaitConverged(client, namespace, fleet.length, minutes(10));
  await first.stop();

  await inParallel(fleet, 10, (member) => client.delete(apiVersion, kind, member.name, namespace));
  const started = performance.now();
  const second = await startOperator(t, options);
  await waitFor(
    "every instance gone",
    async () => ((await client.list(apiVersion, kind, { namespace })).items.length === 0 ? true : undefined),
    { timeoutMs: minutes(10) },
  );
  const goneAfter = performance.now() - started;
  // Claims: Retain kept, Delete deleted (one per replica); children collected by the garbage collector.
  const retained = fleet
    .filter((m) => m.spec.storage && m.spec.storageReclaimPolicy !== "Delete")
    .reduce((total, m) => total + (m.spec.replicas ?? 1), 0);
  await waitFor(
    "claims exactly per reclaim policy, children collected",
    async () => {
      const claims = (await client.list("v1", "PersistentVolumeClaim", { namespace })).items;
      const live = claims.filter((claim) => !claim.metadata.deletionTimestamp);
      const children = [
        ...(await client.list("apps/v1", "Deployment", { namespace })).items,
        ...(await client.list("apps/v1", "StatefulSet", { namespace })).items,
      ];
      return live.length === retained && children.length === 0 ? true : undefined;
    },
    { timeoutMs: minutes(5) },
  );
  await assertNoCrash([second], new Set());
  return { instances: fleet.length, withStorage: size.withStorage, goneAfterStartS: seconds(goneAfter), retained };
}

export interface FailoverSize {
  readonly instances: number;
}

/**
 * Leader failover under load: two operators on one Lease; the fleet is created and the leader SIGKILLed while it
 * works. The standby takes over (time from the kill), the fleet converges, and the standby reconciled nothing
 * before it led.
 */
export async function leaderFailover(t: TestContext, client: KubeClient, size: FailoverSize): Promise<Figures> {
  const namespace = await testNamespace(t, client, "chaos-leader");
  const fleet = members({ namespace, instances: size.instances, withStorage: 0, image: "nginx:1.27" });
  const leaderElection = { namespace, id: `myapp-operator-${namespace}` };
  const [a, b] = await Promise.all(
    ["a", "b"].map((label) => startOperator(t, { namespaces: [namespace], leaderElection, label })),
  );
  const leader = await waitFor("a leader", async () =>
    [a!, b!].find((op) => op.logs.some((line) => line.msg === "became leader")),
  );
  const standby = leader === a ? b! : a!;
  const creating = createFleet(client, namespace, fleet);
  await leader.waitForLog((line) => line.msg === "reconciled", { what: "the leader at work" });
  const killedAt = performance.now();
  await leader.kill();
  const took = await standby.waitForLog((line) => line.msg === "became leader", {
    what: "the standby taking over",
    timeoutMs: minutes(2),
  });
  const takeoverS = seconds(performance.now() - killedAt);
  const before = standby.logs.slice(0, standby.logs.indexOf(took));
  assert.equal(before.filter((line) => line.msg === "reconciled").length, 0, "the standby reconciled nothing before");
  await creating;
  const convergedAt = await awaitConverged(client, namespace, fleet.length, minutes(10));
  await checkFleet(client, namespace, 0);
  await assertNoCrash([standby], new Set());
  return { instances: fleet.length, takeoverS, convergedAfterKillS: seconds(convergedAt - killedAt) };
}

export interface BrownoutSize {
  readonly instances: number;
  /** How long every request of the operator gets 503. */
  readonly brownoutMs: number;
}

/**
 * An apiserver brown-out: a converged fleet is rolled out to a new image, and for `brownoutMs` every request of
 * the operator gets 503 (its watches cut). Afterwards the operator recovers by itself: the fleet converges to the
 * new image, and no instance was ever Degraded (a transient cause may make it Stalled, never Degraded). What the
 * outage cost is the rollout's writes beyond those of the same rollout undisturbed, measured first.
 */
export async function apiserverBrownout(t: TestContext, client: KubeClient, size: BrownoutSize): Promise<Figures> {
  const namespace = await testNamespace(t, client, "chaos-brownout");
  const fleet = members({ namespace, instances: size.instances, withStorage: 0, image: "nginx:1.27" });
  const proxy = await startBrownoutProxy(
    process.env.KUBECONFIG!,
    path.join(localDir, `brownout-${namespace}.kubeconfig`),
  );
  t.after(async () => {
    await proxy.close();
    rmSync(proxy.kubeconfigFile, { force: true });
  });
  const operator = await startOperator(t, {
    namespaces: [namespace],
    leaderElection: false,
    label: "brownout",
    args: [`--kubeconfig=${proxy.kubeconfigFile}`],
  });
  await createFleet(client, namespace, fleet);
  await awaitConverged(client, namespace, fleet.length, minutes(10));
  const undisturbed = await undisturbedRolloutWrites(client, operator, namespace, fleet, "nginx:1.27.1");
  const problems = await watchProblems(client, namespace);

  // WHEN a rollout starts and the apiserver browns out right after
  const beforeRollout = await instanceWrites(operator);
  await rollOut(client, namespace, fleet, "nginx:1.28");
  proxy.brownOut(true);
  const brownoutStarted = performance.now();
  await new Promise((resolve) => setTimeout(resolve, size.brownoutMs));
  const refused = proxy.counts.refused;
  proxy.brownOut(false);
  const recovered = performance.now();
  const firstMinute = writesWithin(operator, 60_000);

  // THEN the fleet converges by itself, never Degraded
  const convergedAt = await awaitConverged(client, namespace, fleet.length, minutes(15));
  await checkFleet(client, namespace, 0);
  await problems.stop();
  const degraded = problems.seen.filter((p) => p.type === "Degraded");
  assert.deepEqual(degraded, [], "no instance was Degraded by the brown-out");
  const rolloutWrites = (await settledWrites(operator)) - beforeRollout;
  const quiet = await quietWindow(operator, 20_000);
  assert.equal(quiet.writes, 0, "no writes once converged");
  await assertNoCrash([operator], new Set());
  const stalled = new Set(problems.seen.filter((p) => p.type === "Stalled").map((p) => p.name));
  return {
    instances: fleet.length,
    brownoutS: seconds(recovered - brownoutStarted),
    refusedRequests: refused,
    convergedAfterRecoveryS: seconds(convergedAt - recovered),
    writesFirstMinutePerInstance: perInstance(await firstMinute, fleet.length),
    rolloutWritesUndisturbedPerInstance: perInstance(undisturbed, fleet.length),
    rolloutWritesWithOutagePerInstance: perInstance(rolloutWrites, fleet.length),
    outageExtraWritesPerInstance: perInstance(rolloutWrites - undisturbed, fleet.length),
    stalledInstances: stalled.size,
    degradedInstances: 0,
  };
}

export interface OutageSize {
  readonly instances: number;
  readonly withStorage: number;
  /** The control-plane process killed (by pid) and started again. */
  readonly component: ControlPlaneComponent;
  /** How long it stays down each time. */
  readonly downMs: number;
}

/**
 * A control-plane restart mid-work, on a local cluster of its own (its outages must not hit the other tests of a
 * run): the fleet is created, and once a third of it exists the apiserver (or etcd)
 * is SIGKILLed, kept down `downMs` and started again as `npm run cluster -- up` does; once converged, the fleet
 * rolls out once undisturbed (what a rollout costs), then to a new image with the same outage a third of the way in. Afterwards: converged by itself (time
 * from the second recovery), the invariants, no instance ever Degraded, no hot loop, 0 writes once converged and
 * on a restart of the operator.
 */
export async function controlPlaneRestart(t: TestContext, size: OutageSize): Promise<Figures> {
  const cluster = await ownCluster("chaos-outage");
  t.after(() => cluster.stop());
  const { client, kubeconfig } = cluster;
  const namespace = await testNamespace(t, client, `chaos-${size.component === "etcd" ? "etcd" : "apiserver"}`);
  const fleet = members({ namespace, instances: size.instances, withStorage: size.withStorage, image: "nginx:1.27" });
  const options = {
    namespaces: [namespace],
    leaderElection: false as const,
    label: size.component,
    client,
    env: { KUBECONFIG: kubeconfig },
  };
  const operator = await startOperator(t, options);
  const problems = await watchProblems(client, namespace);
  const third = Math.ceil(fleet.length / 3);
  const instances = () => client.list<Instance>(apiVersion, kind, { namespace }).then((list) => list.items);

  // WHEN the control plane goes away a third of the way into a create ...
  const creating = createFleet(client, namespace, fleet);
  await waitFor("a third of the fleet created", async () => ((await instances()).length >= third ? true : undefined));
  const first = await cluster.outage(size.component, size.downMs);
  await creating;
  await awaitConverged(client, namespace, fleet.length, minutes(15));
  const undisturbed = await undisturbedRolloutWrites(client, operator, namespace, fleet, "nginx:1.27.1");

  // ... and a third of the way into a rollout
  const beforeRollout = await instanceWrites(operator);
  const rolling = rollOut(client, namespace, fleet, "nginx:1.28");
  await waitFor("a third of the fleet rolling out", async () =>
    (await instances()).filter((i) => i.spec.image === "nginx:1.28").length >= third ? true : undefined,
  );
  const second = await cluster.outage(size.component, size.downMs);
  const firstMinute = writesWithin(operator, 60_000);
  await rolling;

  // THEN the fleet converges by itself, never Degraded, and is quiet once converged
  const convergedAt = await awaitConverged(client, namespace, fleet.length, minutes(15), {
    afterMs: 60_000,
    report: (detail) => t.diagnostic(detail),
  });
  const check = await checkFleet(client, namespace, claimsOf(fleet));
  const rolloutWrites = (await settledWrites(operator)) - beforeRollout;
  await problems.stop();
  assert.deepEqual(
    problems.seen.filter((p) => p.type === "Degraded"),
    [],
    "no instance was Degraded by the outages",
  );
  const quiet = await quietWindow(operator, 20_000);
  assert.equal(quiet.writes, 0, "no writes once converged");
  assert.ok(quiet.reconciles <= fleet.length, `no hot loop: ${quiet.reconciles} reconciles in 20 s of quiet`);
  await assertNoCrash([operator], new Set());
  const writesFirstMinute = await firstMinute;
  await operator.stop();
  const restart = await restartWrites(t, options, fleet.length);
  assert.equal(restart.writes, 0, "a restart of the converged fleet writes nothing");
  await assertNoCrash([restart.operator], new Set());
  const stalled = new Set(problems.seen.filter((p) => p.type === "Stalled").map((p) => p.name));
  return {
    instances: fleet.length,
    withStorage: size.withStorage,
    outages: 2,
    downS: seconds((first.downMs + second.downMs) / 2),
    restartS: seconds(Math.max(first.restartMs, second.restartMs)),
    convergedAfterRecoveryS: seconds(convergedAt - second.recoveredAt),
    writesFirstMinutePerInstance: perInstance(writesFirstMinute, fleet.length),
    rolloutWritesUndisturbedPerInstance: perInstance(undisturbed, fleet.length),
    rolloutWritesWithOutagePerInstance: perInstance(rolloutWrites, fleet.length),
    outageExtraWritesPerInstance: perInstance(rolloutWrites - undisturbed, fleet.length),
    claims: check.claims,
    stalledInstances: stalled.size,
    degradedInstances: 0,
    quietReconciles: quiet.reconciles,
    restartWrites: restart.writes,
    // Components that exited by themselves (lost leader election) and were restarted, as a kubelet would.
    componentsRestarted: cluster.restarted.length ? [...new Set(cluster.restarted)].join(" ") : "none",
    // Pods kwok left waiting on their node that got a kubelet's second look (kubelet-resync.ts).
    podsResynced: cluster.podsResynced(),
  };
}

export interface TokenSize {
  readonly instances: number;
  /**
   * How the operator's token dies: `expiry` waits out a 600 s token (the apiserver's floor for expirationSeconds);
   * `revocation` deletes the Secret the token is bound to (the same 401, at once).
   */
  readonly mode: "expiry" | "revocation";
  /** How long after the token died the new one is written to the token file (a late renewal). */
  readonly lateMs: number;
}

const recorder = fileURLToPath(new URL("../support/request-recorder.ts", import.meta.url));

/**
 * Token expiry: the operator runs as a ServiceAccount on a token file (as the local launcher runs it). Once the
 * fleet converged, its token dies (expires, or is revoked); while it is dead the fleet rolls out, so the operator
 * meets 401s (recorded on the wire); `lateMs` later the new token lands in the file. The operator picks it up by
 * itself (a 401 re-reads the file): the fleet converges, never Degraded, the operator never exits.
 */
export async function tokenRotation(t: TestContext, client: KubeClient, size: TokenSize): Promise<Figures> {
  const namespace = await testNamespace(t, client, `chaos-token-${size.mode === "expiry" ? "exp" : "rev"}`);
  const fleet = members({ namespace, instances: size.instances, withStorage: 0, image: "nginx:1.27" });
  const token = await rotatingToken(t, client, namespace, 600);
  const requests = path.join(localDir, `requests-${namespace}.jsonl`);
  writeFileSync(requests, "");
  t.after(() => rmSync(requests, { force: true }));
  const operator = await startOperator(t, {
    namespaces: [namespace],
    leaderElection: false,
    label: "token",
    // The ServiceAccount holds the default RBAC, which grants the default chart kinds only.
    args: [`--kubeconfig=${token.kubeconfigFile}`, `--chart-kinds=${defaultChartKinds.map(chartKindName).join(",")}`],
    env: { NODE_OPTIONS: `--import=${recorder}`, MYAPP_RECORD_REQUESTS: requests },
  });
  await createFleet(client, namespace, fleet);
  await awaitConverged(client, namespace, fleet.length, minutes(10));
  const problems = await watchProblems(client, namespace);

  // WHEN the token dies ...
  const dead = token.current;
  if (size.mode === "revocation") await token.revoke(dead);
  const died = await waitFor(
    `the apiserver to reject the operator's token (${size.mode})`,
    async () => ((await token.rejected(dead)) ? performance.now() : undefined),
    { timeoutMs: Math.max(0, dead.expiresAt - Date.now()) + minutes(3), intervalMs: 1000 },
  );
  const before = unauthorizedIn(requests);
  // ... and the fleet rolls out while it is dead, and the renewal comes late
  await rollOut(client, namespace, fleet, "nginx:1.28");
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, size.lateMs - (performance.now() - died))));
  const renewedAt = performance.now();
  await token.rotate();

  // THEN the operator met the dead token, took the new one by itself, and the fleet converges, never Degraded
  const convergedAt = await awaitConverged(client, namespace, fleet.length, minutes(10));
  const unauthorized = unauthorizedIn(requests) - before;
  assert.ok(unauthorized > 0, "the operator met the dead token (401) before the renewal");
  await checkFleet(client, namespace, 0);
  await problems.stop();
  assert.deepEqual(
    problems.seen.filter((p) => p.type === "Degraded"),
    [],
    "no instance was Degraded by the dead token",
  );
  const quiet = await quietWindow(operator, 20_000);
  assert.equal(quiet.writes, 0, "no writes once converged");
  assert.ok(quiet.reconciles <= fleet.length, `no hot loop: ${quiet.reconciles} reconciles in 20 s of quiet`);
  await assertNoCrash([operator], new Set());
  const stalled = new Set(problems.seen.filter((p) => p.type === "Stalled").map((p) => p.name));
  return {
    instances: fleet.length,
    mode: size.mode,
    tokenSeconds: 600,
    lateS: seconds(renewedAt - died),
    unauthorizedResponses: unauthorized,
    convergedAfterRenewalS: seconds(convergedAt - renewedAt),
    stalledInstances: stalled.size,
    degradedInstances: 0,
    quietReconciles: quiet.reconciles,
  };
}

/** 401 answers in a request record of test/support/request-recorder.ts. */
function unauthorizedIn(file: string): number {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.includes('"status":401')).length;
}
