/**
 * Hostile tenants: one operator serves a fleet of well-behaved tenants (several namespaces, some instances with
 * storage, some on a chart from a ConfigMap) while tenants in namespaces of their own throw the attack corpus at
 * it (attacks.ts) and one of them floods its namespace with instances. The well-behaved fleet converges, rolls out
 * once without the attackers and once while they attack; then:
 * - operator restarts: 0 (the operator runs as a child process, restarted like a kubelet would if it exits);
 * - objects that break policy in the hostile namespaces (privileged, host namespaces or paths, host ports,
 *   externalIPs, a ServiceAccount the instance did not create; the tenant's own Secret taken over; anything in
 *   kube-system or cluster-wide made for them): 0;
 * - requests to a host outside the allow-list (a counting server on 127.0.0.1): 0;
 * - every hostile instance with the verdict its attack expects (refused at admission, or the reason naming the
 *   cause); the flood admitted up to its namespace's budget (the platform's webhook refuses the rest, naming the
 *   budget), and every admitted flood instance served;
 * - figures: the well-behaved p99 change→Ready with the attackers ÷ without (goal ≤ 1.2), the operator's peak
 *   RSS (VmHWM) and the peak RSS of its helm children.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { apiVersion, kind, namespaceChartSourcesAnnotation, type MyAppInstanceSpecInput } from "../../api/index.ts";
import {
  AdmissionDeniedError,
  ConflictError,
  GoneError,
  InvalidError,
  ServerError,
  type KubeClient,
  type KubeObject,
} from "../../kube/index.ts";
import { parseObjectKey } from "../../kube/object-key.ts";
import { labelKeys, managedBy } from "../../operator/desired/index.ts";
import { kubectl, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import { platformWebhooks } from "../support/platform-webhooks.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import {
  startCountingServer,
  startHugeIndexServer,
  startRedirectServer,
  startSlowDripServer,
} from "../support/hostile-servers.ts";
import {
  conditionOf,
  isCurrent,
  isReadyAtSpec,
  startOperator,
  type Exit,
  type Instance,
  type OperatorProcess,
} from "../support/operator.ts";
import { descendants } from "../support/process-tree.ts";
import { clusterStatus } from "../../tools/lib/cluster.ts";
import { parseSamples, scrape, sum, type Sample } from "../../bench/support/prometheus.ts";
import {
  attacks,
  chartConfigMap,
  existingSecretData,
  floodMembers,
  platformOnlySource,
  tenantChartSources,
  type Attack,
  type AttackContext,
  type AttackServers,
} from "./attacks.ts";
import {
  awaitConverged,
  checkFleet,
  claimsOf,
  createFleet,
  inParallel,
  members,
  persistently,
  quietWindow,
  type FleetMember,
} from "./fleet.ts";
import type { Figures } from "./scenarios.ts";

export interface HostileSize {
  /** Well-behaved instances in all (≥ 100 at full size). */
  readonly tenants: number;
  /** Namespaces the built-in-template tenants spread over (the chart tenants have one more of their own). */
  readonly namespaces: number;
  /** Well-behaved instances with a volume (a StatefulSet). */
  readonly withStorage: number;
  /** Well-behaved instances on this repository's chart (examples/charts/myapp, from a ConfigMap). */
  readonly withChart: number;
  /** Tiny instances one hostile tenant creates in its namespace. */
  readonly flood: number;
  /**
   * The platform's budget of instances per namespace (`--namespace-max-instances`), enforced by the operator's
   * admission webhook: the flood beyond it is refused at the door, naming the budget.
   */
  readonly namespaceBudget: number;
  /** The operator's --max-consecutive-failures: how soon a transient failure (a slow source) shows as Stalled. */
  readonly maxConsecutiveFailures: number;
  /** How long hostile instances may take to reach their verdict. */
  readonly verdictTimeoutMs: number;
}

/** What the scenario measured; `ratio` is the p99 change→Ready with attackers ÷ without (goal ≤ 1.2). */
export interface HostileOutcome {
  readonly figures: Figures;
  readonly ratio: number;
}

/** The memory limit of the operator's container by default (components/settings.ts): its RSS must stay below. */
export const operatorMemoryLimitMiB = 1024;

const minutes = (n: number) => n * 60_000;
const seconds = (ms: number) => Math.round(ms / 100) / 10;
const repoRoot = path.resolve(import.meta.dirname, "../..");
/**
 * The fleet's image, then each rollout's: both rollouts move to an image the fleet never ran, so each makes a new
 * ReplicaSet. Rolling back to the first image instead makes the Deployment controller revive the old ReplicaSet
 * (2.4 times its ReplicaSet writes), and that rollout alone took 1.8 times as long with no attacker at all.
 */
const images = ["nginx:1.27", "nginx:1.28", "nginx:1.29"] as const;

/** One well-behaved instance's change→Ready time in a rollout, and whether it renders a chart. */
interface Timed {
  readonly key: string;
  readonly ms: number;
  readonly chart: boolean;
}

/** A group of well-behaved members in one namespace. */
interface Group {
  readonly namespace: string;
  readonly fleet: readonly FleetMember[];
  readonly chart: boolean;
}

/** Runs the suite at `size`; asserts the invariants and returns the figures. */
export async function hostileTenants(t: TestContext, client: KubeClient, size: HostileSize): Promise<HostileOutcome> {
  const began = performance.now();
  const phase = (what: string) => t.diagnostic(`${seconds(performance.now() - began)} s: ${what}`);
  // GIVEN hostile chart sources on 127.0.0.1: three the platform allow-lists (and that turn hostile), one it does not
  // (but for a folder that the only tenant naming it is narrowed away from)
  const servers: AttackServers = {
    counting: await startCountingServer(),
    slow: await startSlowDripServer(),
    huge: await startHugeIndexServer(),
    redirecting: await startRedirectServer(),
  };
  t.after(() => Promise.all(Object.values(servers).map((server) => server.close())));

  // ... the well-behaved tenants' namespaces and fleets
  const groups: Group[] = [];
  const builtIn = size.tenants - size.withChart;
  for (let i = 0; i < size.namespaces; i++) {
    const namespace = await testNamespace(t, client, `hostile-wb${i}`);
    const count = Math.floor(builtIn / size.namespaces) + (i < builtIn % size.namespaces ? 1 : 0);
    const storage = Math.floor(size.withStorage / size.namespaces) + (i < size.withStorage % size.namespaces ? 1 : 0);
    groups.push({
      namespace,
      chart: false,
      fleet: members({ namespace, instances: count, withStorage: storage, image: images[0] }),
    });
  }
  if (size.withChart > 0) {
    const namespace = await testNamespace(t, client, "hostile-wbchart");
    await chartConfigMap(
      client,
      namespace,
      "myapp-chart",
      await packChart(path.join(repoRoot, "examples/charts/myapp")),
    );
    const fleet = Array.from({ length: size.withChart }, (_, i) => {
      const spec: MyAppInstanceSpecInput = {
        replicas: 1 + (i % 2),
        image: images[0],
        // The example chart sets no securityContext (nginx runs as root): Baseline, as its README says.
        podSecurityLevel: "Baseline",
        chart: { configMap: "myapp-chart" },
      };
      return { name: `chart-${String(i).padStart(3, "0")}`, spec };
    });
    groups.push({ namespace, chart: true, fleet });
  }

  // ... the hostile tenants' namespaces
  const tenants = [...new Set(attacks.map((attack) => attack.tenant))];
  const hostile = new Map<Attack["tenant"], string>();
  for (const tenant of tenants) hostile.set(tenant, await testNamespace(t, client, `hostile-${tenant}`));
  for (const [tenant, sources] of Object.entries(tenantChartSources(servers))) {
    const name = hostile.get(tenant as Attack["tenant"])!;
    const annotations = { [namespaceChartSourcesAnnotation]: sources };
    await client.mergePatch("v1", "Namespace", name, undefined, { metadata: { annotations } });
  }
  const floodNamespace = await testNamespace(t, client, "hostile-flood");
  const hostileNamespaces = [...hostile.values(), floodNamespace];

  // ... the platform's admission webhooks with a budget per namespace
  const namespaces = [...groups.map((group) => group.namespace), ...hostileNamespaces];
  const webhooks = await platformWebhooks(t, client, {
    watchNamespaces: namespaces,
    policy: { namespaceBudget: { instances: size.namespaceBudget } },
  });

  // ... and one operator for everyone, restarted if it ever exits (counted)
  const options = {
    namespaces,
    leaderElection: false as const,
    label: "hostile",
    args: [
      `--helm=${await helmBinary()}`,
      `--chart-sources=${[servers.slow.url, servers.huge.url, servers.redirecting.url, platformOnlySource(servers)].join(",")}`,
      `--max-consecutive-failures=${size.maxConsecutiveFailures}`,
      ...webhooks.flags,
    ],
  };
  const supervisor = await supervise(t, options);
  const memory = sampleMemory(supervisor);
  t.after(() => memory.stop());

  // WHEN the well-behaved fleet converges and rolls out without attackers
  await Promise.all(groups.map((group) => createFleet(client, group.namespace, group.fleet)));
  for (const group of groups) await awaitConverged(client, group.namespace, group.fleet.length, minutes(15));
  phase("the well-behaved fleet converged");
  const cpu = cpuMeter(supervisor);
  const wellBehavedNamespaces = new Set(groups.map((group) => group.namespace));
  const cpuBefore = await cpu.read();
  const apiBefore = await apiserverWork(client);
  const withoutLogFrom = supervisor.current.logs.length;
  const without = await timedRollout(client, groups, images[1]);
  const cpuWithout = cpuSpent(cpuBefore, await cpu.read());
  const apiWithout = workSpent(apiBefore, await apiserverWork(client));
  phase(`rolled out without attackers (CPU s: ${describeCpu(cpuWithout)})`);
  phase(
    `work without attackers: ${describeWork(supervisor.current.logs.slice(withoutLogFrom), wellBehavedNamespaces)}`,
  );

  // ... and rolls out again while the hostile tenants attack
  const contexts = new Map<Attack, AttackContext>(
    attacks.map((attack) => [attack, { client, namespace: hostile.get(attack.tenant)!, servers }]),
  );
  for (const attack of attacks) await attack.setup?.(contexts.get(attack)!);
  const scratch = mkdtempSync(path.join(os.tmpdir(), "hostile-attacks-"));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const refusals = new Map<string, string>();
  const flood = floodMembers(size.flood);
  const floodStarted = performance.now();
  const attacking = Promise.all([
    inParallel(attacks, 4, async (attack) => {
      const context = contexts.get(attack)!;
      const refusal = await createRaw(client, scratch, context.namespace, attack.name, attack.spec(context));
      if (refusal !== undefined) refusals.set(attack.name, refusal);
    }),
    createWithinBudget(client, floodNamespace, flood),
  ]);
  const attackLogFrom = supervisor.current.logs.length;
  const cpuAttackStart = await cpu.read();
  const apiAttackStart = await apiserverWork(client);
  const withAttackers = await timedRollout(client, groups, images[2]);
  const cpuWith = cpuSpent(cpuAttackStart, await cpu.read());
  const apiWith = workSpent(apiAttackStart, await apiserverWork(client));
  phase(`apiserver work without → with attackers: ${describeApiserverWork(apiWithout, apiWith)}`);
  phase(`rolled out under attack (CPU s: ${describeCpu(cpuWith)})`);
  phase(`work under attack: ${describeWork(supervisor.current.logs.slice(attackLogFrom), wellBehavedNamespaces)}`);
  const workerTime = new Map<string, { reconciles: number; ms: number }>();
  for (const line of supervisor.current.logs.slice(attackLogFrom)) {
    if (line.msg !== "reconciled" || typeof line.key !== "string") continue;
    const { namespace } = parseObjectKey(line.key);
    const kind = wellBehavedNamespaces.has(namespace)
      ? "wellBehaved"
      : namespace === floodNamespace
        ? "flood"
        : "hostile";
    const entry = workerTime.get(`${kind}/${String(line["result"])}`) ?? { reconciles: 0, ms: 0 };
    entry.reconciles += 1;
    entry.ms += Number(line["durationMs"] ?? 0);
    workerTime.set(`${kind}/${String(line["result"])}`, entry);
  }
  phase(
    `worker time under attack: ${[...workerTime]
      .map(([what, { reconciles, ms }]) => `${what} ${reconciles} reconciles ${seconds(ms)} s`)
      .join(", ")}`,
  );
  const [, floodAdmission] = await attacking;
  assert.equal(
    floodAdmission.admitted,
    Math.min(flood.length, size.namespaceBudget),
    `the flood gets exactly its namespace's budget; refused with: ${floodAdmission.refusal ?? "nothing"}`,
  );
  if (floodAdmission.refused > 0) assert.match(floodAdmission.refusal ?? "", /may have at most \d+ instances/);

  // THEN every hostile instance gets its verdict, and the flood is served
  const verdicts = await awaitVerdicts(client, contexts, refusals, size.verdictTimeoutMs);
  phase("every hostile instance has a verdict");
  const floodServedAt = await waitFor(
    `${floodAdmission.admitted} admitted flood instances served`,
    async () => {
      const items = (await client.list<Instance>(apiVersion, kind, { namespace: floodNamespace })).items;
      const served = items.filter((i) => isCurrent(i) && conditionOf(i, "Ready")?.status === "True");
      return served.length === floodAdmission.admitted ? performance.now() : undefined;
    },
    { timeoutMs: size.verdictTimeoutMs, intervalMs: 2_000 },
  );

  phase("the flood is served");
  // ... the well-behaved fleet is whole, nothing broke policy, nothing outside the allow-list was asked
  for (const group of groups) {
    await awaitConverged(client, group.namespace, group.fleet.length, minutes(5));
    if (!group.chart) await checkFleet(client, group.namespace, claimsOf(group.fleet));
  }
  const breaches = await policyBreaches(client, hostileNamespaces, hostile.get("objects")!);
  assert.deepEqual(breaches, [], "no object in a hostile namespace (or beyond it) breaks policy");
  const forbidden = servers.counting.connections() + servers.counting.requests.length;
  assert.equal(
    forbidden,
    0,
    `no request to a source outside the allow-list or the namespace's: ${servers.counting.requests.join(", ")}`,
  );
  const quiet = await quietWindow(supervisor.current, 20_000);
  const everyone = size.tenants + attacks.length + floodAdmission.admitted;
  assert.ok(quiet.reconciles <= everyone, `no hot loop: ${quiet.reconciles} reconciles in 20 s of quiet`);
  const rss = memory.stop();
  assert.equal(supervisor.exits.length, 0, `the operator never exited: ${JSON.stringify(supervisor.exits)}`);
  assert.ok(rss.operatorMiB < operatorMemoryLimitMiB, `operator peak RSS ${rss.operatorMiB} MiB within its limit`);

  const mismatches = verdicts.filter((verdict) => !verdict.ok);
  assert.deepEqual(
    mismatches.map((verdict) => `${verdict.attack.name}: ${verdict.seen}`),
    [],
    "every hostile instance has the verdict its attack expects",
  );

  const p99 = (timed: readonly Timed[], which?: "chart" | "builtIn") =>
    percentile(
      timed.filter((one) => which === undefined || one.chart === (which === "chart")).map((one) => one.ms),
      0.99,
    );
  const slowest = (timed: readonly Timed[]) =>
    [...timed]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3)
      .map((one) => `${one.key} ${seconds(one.ms)}`)
      .join(", ");
  phase(`slowest without: ${slowest(without)}; with: ${slowest(withAttackers)}`);
  const p99Without = p99(without);
  const p99With = p99(withAttackers);
  const ratio = p99With / p99Without;
  const count = (what: string) => verdicts.filter((verdict) => verdict.seen.startsWith(what)).length;
  return {
    ratio,
    figures: {
      wellBehaved: size.tenants,
      namespaces: groups.length,
      withStorage: size.withStorage,
      withChart: size.withChart,
      attacks: attacks.length,
      flood: flood.length,
      namespaceBudget: size.namespaceBudget,
      floodRefused: floodAdmission.refused,
      operatorRestarts: supervisor.exits.length,
      policyBreakingObjects: breaches.length,
      forbiddenRequests: forbidden,
      p99ReadyWithoutS: seconds(p99Without),
      p99ReadyWithS: seconds(p99With),
      p99Ratio: Math.round(ratio * 100) / 100,
      p50ReadyWithoutS: seconds(
        percentile(
          without.map((one) => one.ms),
          0.5,
        ),
      ),
      p50ReadyWithS: seconds(
        percentile(
          withAttackers.map((one) => one.ms),
          0.5,
        ),
      ),
      // Per group: where the attack's cost lands (chart tenants share the render slots with the hostile charts).
      p99BuiltInWithoutS: seconds(p99(without, "builtIn")),
      p99BuiltInWithS: seconds(p99(withAttackers, "builtIn")),
      p99ChartWithoutS: seconds(p99(without, "chart")),
      p99ChartWithS: seconds(p99(withAttackers, "chart")),
      // CPU seconds during each rollout, by process: what the attack made the machine do meanwhile.
      cpuWithoutS: describeCpu(cpuWithout),
      cpuWithS: describeCpu(cpuWith),
      operatorPeakRssMiB: rss.operatorMiB,
      helmPeakRssMiB: rss.childrenMiB,
      refusedAtAdmission: count("refused"),
      degraded: count("Degraded"),
      stalled: count("Stalled"),
      served: count("served"),
      floodServedS: seconds(floodServedAt - floodStarted),
      // Renders that turned long while the operator had work, and gave way until it was quiet (long-render-yield.ts).
      rendersGaveWay: supervisor.current.logs.filter((line) => String(line.msg).startsWith("a long render gave way"))
        .length,
      quietReconciles: quiet.reconciles,
      verdicts: verdicts.map((verdict) => `${verdict.attack.name}=${verdict.seen.split(":")[0]}`).join(" "),
    },
  };
}

// ---- the well-behaved tenants' reconciles, from the operator's debug lines ----

/**
 * The well-behaved tenants' reconciles in `logs` (the operator's lines during one rollout): by result, with their
 * writes; how many per instance; and what woke them (the "enqueued" debug lines: the kind whose event it was, and
 * whether the key was already queued, so the wake-up merged).
 */
function describeWork(logs: readonly { msg?: unknown; [field: string]: unknown }[], wellBehaved: ReadonlySet<string>) {
  const ours = (key: unknown): key is string =>
    typeof key === "string" && wellBehaved.has(parseObjectKey(key).namespace);
  const results = new Map<string, { n: number; ms: number; writes: number }>();
  const perKey = new Map<string, number>();
  const wakes = new Map<string, number>();
  for (const line of logs) {
    if (!ours(line["key"])) continue;
    if (line.msg === "reconciled") {
      const result = String(line["result"]);
      const entry = results.get(result) ?? { n: 0, ms: 0, writes: 0 };
      entry.n += 1;
      entry.ms += Number(line["durationMs"] ?? 0);
      entry.writes += Number(line["writes"] ?? 0);
      results.set(result, entry);
      perKey.set(line["key"], (perKey.get(line["key"]) ?? 0) + 1);
    } else if (line.msg === "enqueued") {
      const what = `${String(line["source"])}${line["queued"] ? " merged" : ""}`;
      wakes.set(what, (wakes.get(what) ?? 0) + 1);
    }
  }
  const spread = new Map<number, number>();
  for (const n of perKey.values()) spread.set(n, (spread.get(n) ?? 0) + 1);
  return [
    [...results].map(([result, e]) => `${result} ${e.n} (${seconds(e.ms)} s, ${e.writes} writes)`).join(", "),
    `reconciles per instance ${[...spread]
      .sort(([a], [b]) => a - b)
      .map(([n, keys]) => `${n}×${keys}`)
      .join(" ")}`,
    `woken by ${[...wakes].map(([what, n]) => `${what} ${n}`).join(", ")}`,
  ].join("; ");
}

// ---- CPU by process, around each rollout ----

type CpuReading = Readonly<Record<string, number>>;

/**
 * Reads CPU seconds (user + system) so far of the operator, of its helm renders (the children it has waited for:
 * cutime + cstime), and of the local cluster's processes (kwokctl's pid files), when found.
 */
function cpuMeter(supervisor: Supervisor) {
  const ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  const stat = (pid: number | undefined): number[] | undefined => {
    if (pid === undefined) return undefined;
    try {
      const text = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After "(comm)": utime, stime, cutime, cstime are fields 14-17 (proc(5)).
      return text
        .slice(text.lastIndexOf(")") + 2)
        .split(" ")
        .slice(11, 15)
        .map((field) => Number(field) / ticks);
    } catch {
      return undefined;
    }
  };
  return {
    async read(): Promise<CpuReading> {
      const own = process.cpuUsage();
      // This process measures (its watches time each Ready) and also serves the hostile chart sources.
      const reading: Record<string, number> = { test: (own.user + own.system) / 1e6 };
      // The whole machine (proc(5), /proc/stat's first line): what nobody above accounts for shows here.
      const machine = readFileSync("/proc/stat", "utf8").split("\n")[0]!.split(/\s+/).slice(1).map(Number);
      const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = machine;
      reading["machineBusy"] = (user + nice + system + irq + softirq) / ticks;
      reading["machineNice"] = nice / ticks;
      reading["machineIdle"] = idle / ticks;
      reading["machineIowait"] = iowait / ticks;
      reading["machineSteal"] = steal / ticks;
      const operator = stat(supervisor.current.process.pid);
      if (operator) {
        reading["operator"] = operator[0]! + operator[1]!;
        reading["helm"] = operator[2]! + operator[3]!;
      }
      // The operator's queue: how many reconciles, how long keys waited for a worker, how long reconciles took.
      const metrics = await scrape(supervisor.current.metricsUrl).catch(() => undefined);
      if (metrics) {
        reading["reconciles"] = sum(metrics, "controller_runtime_reconcile_total");
        reading["queueWaitS"] = sum(metrics, "workqueue_queue_duration_seconds_sum");
        reading["reconcileS"] = sum(metrics, "controller_runtime_reconcile_time_seconds_sum");
      }
      const components = (await clusterStatus().catch(() => undefined))?.components ?? [];
      for (const component of components) {
        const own = component.running ? stat(component.pid) : undefined;
        if (own) reading[component.name] = own[0]! + own[1]!;
      }
      return reading;
    },
  };
}

/** What each process spent between two readings (processes present in both). */
function cpuSpent(before: CpuReading, after: CpuReading): CpuReading {
  return Object.fromEntries(
    Object.entries(after)
      .filter(([name]) => before[name] !== undefined)
      .map(([name, seconds]) => [name, Math.round((seconds - before[name]!) * 10) / 10]),
  );
}

function describeCpu(spent: CpuReading): string {
  return Object.entries(spent)
    .map(([name, seconds]) => `${name} ${seconds}`)
    .join(" / ");
}

// ---- the apiserver's work, around each rollout ----

type ApiserverWork = ReadonlyMap<string, { readonly requests: number; readonly seconds: number }>;

/**
 * The apiserver's requests so far by verb and resource (watches left out: their duration is their lifetime), with
 * the seconds spent answering them: where the machine's shared CPU goes during a rollout.
 */
async function apiserverWork(client: KubeClient): Promise<ApiserverWork> {
  const samples = parseSamples(await client.raw("/metrics"));
  const work = new Map<string, { requests: number; seconds: number }>();
  const entry = (labels: Sample["labels"]) => {
    const key = `${labels["verb"]} ${labels["resource"]}${labels["subresource"] ? `/${labels["subresource"]}` : ""}`;
    const found = work.get(key) ?? { requests: 0, seconds: 0 };
    work.set(key, found);
    return found;
  };
  for (const sample of samples) {
    if (sample.labels["verb"] === "WATCH" || sample.labels["verb"] === "CONNECT") continue;
    if (sample.name === "apiserver_request_total") entry(sample.labels).requests += sample.value;
    else if (sample.name === "apiserver_request_duration_seconds_sum") entry(sample.labels).seconds += sample.value;
  }
  return work;
}

function workSpent(before: ApiserverWork, after: ApiserverWork): ApiserverWork {
  return new Map(
    [...after].map(([key, { requests, seconds }]) => [
      key,
      { requests: requests - (before.get(key)?.requests ?? 0), seconds: seconds - (before.get(key)?.seconds ?? 0) },
    ]),
  );
}

/** The kinds of request whose seconds grew most from one rollout to the other, with both rollouts' figures. */
function describeApiserverWork(without: ApiserverWork, withAttackers: ApiserverWork): string {
  const total = (work: ApiserverWork) =>
    [...work.values()].reduce(
      (sum, one) => ({ requests: sum.requests + one.requests, seconds: sum.seconds + one.seconds }),
      {
        requests: 0,
        seconds: 0,
      },
    );
  const growth = [...withAttackers]
    .map(([key, one]) => ({ key, one, before: without.get(key) ?? { requests: 0, seconds: 0 } }))
    .sort((a, b) => b.one.seconds - b.before.seconds - (a.one.seconds - a.before.seconds))
    .slice(0, 10);
  const show = (one: { requests: number; seconds: number }) =>
    `${Math.round(one.requests)} (${seconds(one.seconds * 1000)} s)`;
  return [
    `all ${show(total(without))} → ${show(total(withAttackers))}`,
    ...growth.map(({ key, one, before }) => `${key} ${show(before)} → ${show(one)}`),
  ].join("; ");
}

// ---- the operator, supervised ----

interface Supervisor {
  /** The running process (a new one after an exit). */
  readonly current: OperatorProcess;
  /** Every exit that was not the test's own stop. */
  readonly exits: readonly Exit[];
}

/** Starts the operator and starts it again whenever it exits by itself, as a kubelet would; counts those exits. */
async function supervise(t: TestContext, options: Parameters<typeof startOperator>[1]): Promise<Supervisor> {
  const exits: Exit[] = [];
  let stopping = false;
  // After-hooks run in the order they were registered: this one before startOperator's stop, so the test's own
  // stop is never counted (or answered with a restart).
  t.after(() => void (stopping = true));
  const state = { current: await startOperator(t, options), exits };
  const watch = (operator: OperatorProcess) => {
    void operator.exited.then(async (exit) => {
      if (stopping) return;
      exits.push(exit);
      t.diagnostic(`the operator exited (${JSON.stringify(exit)}): ${operator.logTail()}`);
      state.current = await startOperator(t, options);
      watch(state.current);
    });
  };
  watch(state.current);
  return state;
}

/** Peak RSS of the operator (VmHWM, every process it ran) and of the sum of its children (helm), sampled every second. */
function sampleMemory(supervisor: Supervisor) {
  let operatorKiB = 0;
  let childrenKiB = 0;
  const field = (pid: number, name: string) => {
    try {
      const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return Number(match?.[1] ?? 0);
    } catch {
      return 0; // gone
    }
  };
  const sample = () => {
    const pid = supervisor.current.process.pid;
    if (pid === undefined) return;
    operatorKiB = Math.max(operatorKiB, field(pid, "VmHWM"), field(pid, "VmRSS"));
    const children = descendants(pid).reduce((total, child) => total + field(child.pid, "VmRSS"), 0);
    childrenKiB = Math.max(childrenKiB, children);
  };
  const timer = setInterval(sample, 1_000);
  let result: { operatorMiB: number; childrenMiB: number } | undefined;
  return {
    stop: () => {
      if (!result) {
        sample();
        clearInterval(timer);
        result = { operatorMiB: Math.round(operatorKiB / 1024), childrenMiB: Math.round(childrenKiB / 1024) };
      }
      return result;
    },
  };
}

// ---- the well-behaved rollout, timed per instance ----

/**
 * Sets `image` on every well-behaved instance (10 requests at once) and returns, per instance, the time from its
 * patch to the first version a watch shows Ready at that spec, in ms.
 */
async function timedRollout(client: KubeClient, groups: readonly Group[], image: string): Promise<Timed[]> {
  const patched = new Map<string, number>();
  const ready = new Map<string, number>();
  const watches = await Promise.all(
    groups.map((group) =>
      watchInstances(client, group.namespace, (instance) => {
        const key = `${group.namespace}/${instance.metadata.name ?? ""}`;
        if (!ready.has(key) && instance.spec.image === image && isReadyAtSpec(instance))
          ready.set(key, performance.now());
      }),
    ),
  );
  try {
    const all = groups.flatMap((group) =>
      group.fleet.map((member) => ({ namespace: group.namespace, chart: group.chart, member })),
    );
    await inParallel(all, 10, async ({ namespace, member }) => {
      await persistently(() => client.mergePatch(apiVersion, kind, member.name, namespace, { spec: { image } }));
      patched.set(`${namespace}/${member.name}`, performance.now());
    });
    await waitFor(
      `${all.length} well-behaved instances Ready on ${image}`,
      async () => ([...patched.keys()].every((key) => ready.has(key)) ? true : undefined),
      { timeoutMs: minutes(20), intervalMs: 500 },
    );
    const chart = new Set(all.filter((one) => one.chart).map((one) => `${one.namespace}/${one.member.name}`));
    return [...patched].map(([key, at]) => ({ key, ms: Math.max(0, ready.get(key)! - at), chart: chart.has(key) }));
  } finally {
    await Promise.all(watches.map((stop) => stop()));
  }
}

/** Watches the instances of `namespace` (resuming after a watch ends; relisting after a 410); returns a stop. */
async function watchInstances(client: KubeClient, namespace: string, note: (instance: Instance) => void) {
  const abort = new AbortController();
  const relist = async () => {
    const listed = await client.list<Instance>(apiVersion, kind, { namespace });
    listed.items.forEach(note);
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
          if (event.type === "ADDED" || event.type === "MODIFIED") note(event.object);
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
        if (error instanceof GoneError) resourceVersion = await relist().catch(() => resourceVersion);
      }
    }
  })();
  return async () => {
    abort.abort();
    await loop;
  };
}

/** The `q` quantile of `values` (nearest rank). */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

// ---- attacks and their verdicts ----

/**
 * Creates every member that its namespace's budget admits (10 at once, persistently through outages), counting
 * the ones the platform's webhook refuses and keeping one refusal's words.
 */
async function createWithinBudget(client: KubeClient, namespace: string, fleet: readonly FleetMember[]) {
  const outcome = { admitted: 0, refused: 0, refusal: undefined as string | undefined };
  await inParallel(fleet, 10, async (member) => {
    try {
      await persistently(() =>
        client.create({ apiVersion, kind, metadata: { name: member.name, namespace }, spec: member.spec }),
      );
      outcome.admitted += 1;
    } catch (error) {
      if (!(error instanceof AdmissionDeniedError)) throw error;
      outcome.refused += 1;
      outcome.refusal ??= error.message;
    }
  });
  return outcome;
}

/**
 * Creates an instance from a spec given as JSON text (own `__proto__` keys survive the parse); returns the
 * apiserver's message if it refused the create (422 from the schema or CEL, 403 from admission). Text nested deeper
 * than `JSON.stringify` (the client's) can write goes through kubectl as written: a Go process start each, which
 * the measured fleet would compete with, so only where needed. A server error is no verdict (the webhook's 500
 * "could not judge ...; try again" when a lookup outlasts its allowance under the attack's load): the create is
 * sent again, as the flood's are (`persistently`); any other error still ends the run.
 */
async function createRaw(
  client: KubeClient,
  scratch: string,
  namespace: string,
  name: string,
  spec: string,
): Promise<string | undefined> {
  const text = `{"apiVersion":"${apiVersion}","kind":"${kind}","metadata":{"name":"${name}","namespace":"${namespace}"},"spec":${spec}}`;
  const body = JSON.parse(text) as KubeObject;
  const file = path.join(scratch, `${name}.json`);
  const create = serializable(body) ? () => createWithClient(client, body) : () => createWithKubectl(file, text);
  let retried = false;
  const answer = await waitFor(
    `a verdict on ${namespace}/${name}, not a server error`,
    async () => {
      try {
        return { refusal: await create() };
      } catch (error) {
        // Found after a server error: that attempt was stored, its answer lost; the instance is judged as it is.
        const stored = retried && error instanceof ConflictError && error.reason === "AlreadyExists";
        if (stored) return { refusal: undefined };
        if (!(error instanceof ServerError)) return { error };
        retried = true;
        throw error;
      }
    },
    { timeoutMs: minutes(5), intervalMs: 500 },
  );
  if ("error" in answer) throw answer.error;
  return answer.refusal;
}

async function createWithClient(client: KubeClient, body: KubeObject): Promise<string | undefined> {
  try {
    await client.create(body);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidError || error instanceof AdmissionDeniedError) return error.message;
    throw error;
  }
}

function serializable(body: unknown): boolean {
  try {
    JSON.stringify(body);
    return true;
  } catch {
    return false;
  }
}

/** The HTTP status of each server failure kubectl names by its reason (`Error from server (Reason): ...`). */
const serverFailureStatus: Partial<Record<string, number>> = {
  InternalError: 500,
  ServerTimeout: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
};

async function createWithKubectl(file: string, text: string): Promise<string | undefined> {
  writeFileSync(file, text);
  try {
    await kubectl("create", "-f", file);
    return undefined;
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? "");
    // The server's failure, not a refusal, though a webhook's 500 also reads "denied the request".
    const reason = /^Error from server \((\w+)\)/m.exec(stderr)?.[1] ?? "";
    const status = serverFailureStatus[reason];
    if (status !== undefined) throw new ServerError(status, stderr.trim(), reason, [], { cause: error });
    if (/denied the request|is invalid/.test(stderr)) return stderr.trim();
    throw error;
  }
}

interface VerdictSeen {
  readonly attack: Attack;
  /** `refused: message`, `Degraded: Reason: message`, `Stalled: ...`, `served`, or what was seen instead. */
  readonly seen: string;
  readonly ok: boolean;
}

/** What `instance` shows now, against what `attack` expects. */
function judge(attack: Attack, instance: Instance | undefined, refusal: string | undefined): VerdictSeen {
  const verdict = attack.verdict;
  if (refusal !== undefined) {
    return { attack, seen: `refused: ${refusal}`, ok: "refused" in verdict && verdict.refused.test(refusal) };
  }
  if (!instance) return { attack, seen: "missing", ok: false };
  if ("refused" in verdict) return { attack, seen: "created (not refused)", ok: false };
  if ("served" in verdict) {
    const ok = isCurrent(instance) && conditionOf(instance, "Ready")?.status === "True";
    return { attack, seen: ok ? "served" : `not served: ${JSON.stringify(instance.status?.conditions ?? [])}`, ok };
  }
  const condition = conditionOf(instance, verdict.condition);
  if (condition?.status === "True") {
    const ok =
      condition.reason === verdict.reason &&
      (verdict.message === undefined || verdict.message.test(condition.message ?? ""));
    return { attack, seen: `${verdict.condition}: ${condition.reason}: ${condition.message ?? ""}`, ok };
  }
  const problems = (instance.status?.conditions ?? []).filter(
    (c) => (c.type === "Degraded" || c.type === "Stalled" || c.type === "Ready") && c.status === "True",
  );
  const seen = problems.map((c) => `${c.type}: ${c.reason}: ${c.message ?? ""}`).join("; ") || "no verdict yet";
  return { attack, seen, ok: false };
}

/** Polls every hostile instance until each has its expected verdict, or the deadline; returns what was seen. */
async function awaitVerdicts(
  client: KubeClient,
  contexts: ReadonlyMap<Attack, AttackContext>,
  refusals: ReadonlyMap<string, string>,
  timeoutMs: number,
): Promise<VerdictSeen[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen: VerdictSeen[] = [];
    for (const [attack, context] of contexts) {
      const instance = refusals.has(attack.name)
        ? undefined
        : await client.find<Instance>(apiVersion, kind, attack.name, context.namespace);
      seen.push(judge(attack, instance, refusals.get(attack.name)));
    }
    if (seen.every((verdict) => verdict.ok) || Date.now() > deadline) return seen;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

// ---- policy ----

type PodSpec = {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  serviceAccountName?: string;
  serviceAccount?: string;
  priorityClassName?: string;
  tolerations?: unknown[];
  nodeName?: string;
  volumes?: { name: string; hostPath?: unknown; ephemeral?: unknown }[];
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
};
type Container = {
  name: string;
  ports?: { hostPort?: number }[];
  securityContext?: { privileged?: boolean; capabilities?: { add?: string[] } };
};
type Workload = Typed<{
  spec?: { template?: { spec?: PodSpec } } & PodSpec & { externalIPs?: string[]; type?: string };
}>;

/** The tolerations the apiserver gives every pod (DefaultTolerationSeconds), not the chart. */
const defaultTolerationKeys = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"];

/**
 * What is wrong with one pod spec (`scheduled`: a Pod, whose nodeName is the scheduler's): privileged, host namespaces, hostPath, hostPort, a borrowed ServiceAccount, a
 * priority, tolerations or a node of its own, an ephemeral volume.
 */
function podBreaches(spec: PodSpec | undefined, ownAccounts: ReadonlySet<string>, scheduled: boolean): string[] {
  if (!spec) return [];
  const found: string[] = [];
  if (spec.hostNetwork) found.push("hostNetwork");
  if (spec.hostPID) found.push("hostPID");
  if (spec.hostIPC) found.push("hostIPC");
  if (spec.priorityClassName) found.push(`priority class ${spec.priorityClassName}`);
  // A Pod's own: the scheduler's nodeName and the tolerations every pod gets at admission (DefaultTolerationSeconds)
  const tolerations = (spec.tolerations ?? []).filter(
    (toleration) => !defaultTolerationKeys.includes((toleration as { key?: string }).key ?? ""),
  );
  if (tolerations.length > 0) found.push("tolerations");
  if (spec.nodeName && !scheduled) found.push(`nodeName ${spec.nodeName}`);
  for (const volume of spec.volumes ?? []) if (volume.ephemeral) found.push(`ephemeral volume ${volume.name}`);
  for (const volume of spec.volumes ?? []) if (volume.hostPath) found.push(`hostPath volume ${volume.name}`);
  for (const container of [
    ...(spec.containers ?? []),
    ...(spec.initContainers ?? []),
    ...(spec.ephemeralContainers ?? []),
  ]) {
    if (container.securityContext?.privileged) found.push(`privileged container ${container.name}`);
    const added = container.securityContext?.capabilities?.add ?? [];
    if (added.some((capability) => /^(ALL|SYS_ADMIN|NET_ADMIN|SYS_PTRACE|SYS_MODULE)$/.test(capability))) {
      found.push(`container ${container.name} adds ${added.join(",")}`);
    }
    if ((container.ports ?? []).some((port) => port.hostPort))
      found.push(`container ${container.name} uses a hostPort`);
  }
  const account = spec.serviceAccountName ?? spec.serviceAccount;
  if (account && account !== "default" && !ownAccounts.has(account)) found.push(`runs as ServiceAccount ${account}`);
  return found;
}

/**
 * Every object in the hostile namespaces that breaks policy, as `namespace Kind/name: what`; plus the tenant's own
 * Secret if it was taken over, and anything the operator made for them in kube-system or cluster-wide.
 */
async function policyBreaches(
  client: KubeClient,
  namespaces: readonly string[],
  takeoverNamespace: string,
): Promise<string[]> {
  const found: string[] = [];
  // Paths, not typed kinds: DaemonSets and Jobs are no kind the operator knows, yet a policy breach all the same.
  const kinds = [
    ["apis/apps/v1", "deployments", "Deployment"],
    ["apis/apps/v1", "statefulsets", "StatefulSet"],
    ["apis/apps/v1", "daemonsets", "DaemonSet"],
    ["apis/apps/v1", "replicasets", "ReplicaSet"],
    ["apis/batch/v1", "jobs", "Job"],
    ["api/v1", "pods", "Pod"],
    ["api/v1", "services", "Service"],
  ] as const;
  for (const namespace of namespaces) {
    // ServiceAccounts an instance controls (a chart may run its pods as one it creates).
    const accounts = (await client.list<KubeObject>("v1", "ServiceAccount", { namespace })).items;
    const own = new Set(
      accounts
        .filter((account) => account.metadata.ownerReferences?.some((owner) => owner.kind === kind && owner.controller))
        .map((account) => account.metadata.name ?? ""),
    );
    for (const [prefix, plural, objectKind] of kinds) {
      const listed = JSON.parse(await client.raw(`/${prefix}/namespaces/${namespace}/${plural}`)) as {
        items: Workload[];
      };
      for (const object of listed.items) {
        const spec = object.spec;
        const problems =
          objectKind === "Service"
            ? [
                ...((spec?.externalIPs ?? []).length > 0 ? ["externalIPs"] : []),
                ...(spec?.type && spec.type !== "ClusterIP" ? [`type ${spec.type}`] : []),
              ]
            : podBreaches(objectKind === "Pod" ? spec : spec?.template?.spec, own, objectKind === "Pod");
        for (const problem of problems)
          found.push(`${namespace} ${objectKind}/${object.metadata.name ?? ""}: ${problem}`);
      }
    }
  }
  const secret = await client.find<Typed<{ data?: Record<string, string> }>>(
    "v1",
    "Secret",
    "db-credentials",
    takeoverNamespace,
  );
  if (!secret) found.push(`${takeoverNamespace} Secret/db-credentials: deleted`);
  else {
    if (secret.metadata.ownerReferences?.length)
      found.push(`${takeoverNamespace} Secret/db-credentials: taken over (owner references)`);
    if (JSON.stringify(secret.data) !== JSON.stringify(existingSecretData))
      found.push(`${takeoverNamespace} Secret/db-credentials: data changed`);
  }
  const ours = `${labelKeys.managedBy}=${managedBy}`;
  for (const [version, objectKind] of [
    ["apps/v1", "Deployment"],
    ["v1", "Service"],
  ] as const) {
    const elsewhere = (
      await client.list<KubeObject>(version, objectKind, { namespace: "kube-system", labelSelector: ours })
    ).items;
    for (const object of elsewhere)
      found.push(`kube-system ${objectKind}/${object.metadata.name ?? ""}: made for a tenant`);
  }
  const named = [
    ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding", `${takeoverNamespace}-admin`, undefined],
    ["apps/v1", "Deployment", "other-namespace", "kube-system"],
  ] as const;
  for (const [version, objectKind, name, namespace] of named) {
    if (await client.find(version, objectKind, name, namespace)) found.push(`${objectKind}/${name}: made for a tenant`);
  }
  for (const objectKind of ["ClusterRoleBinding", "ClusterRole"]) {
    const cluster = (await client.list<KubeObject>("rbac.authorization.k8s.io/v1", objectKind, { labelSelector: ours }))
      .items;
    for (const object of cluster) found.push(`${objectKind}/${object.metadata.name ?? ""}: made for a tenant`);
  }
  return found;
}
