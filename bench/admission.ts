/**
 * Admission: what the platform's admission (the policy the apiserver decides itself, components/instance-policy.ts,
 * and the operator's webhooks, operator/admission/) adds to a user's write of a MyAppInstance, measured through the
 * real apiserver in one run against the local cluster:
 * - latency: server-side-apply dry-runs of valid new instances (what `pulumi preview` sends) at a steady rate
 *   (open loop: each request leaves on its schedule whatever the others do), apply sent → answer, with and without
 *   the admission; and, from the operator's controller_runtime_webhook_latency_seconds histogram, how long its
 *   HTTPS server took for each /mutate and /validate call;
 * - bulk: server-side apply of N new instances, C in flight (a kubectl-like client that parallelises), with ÷
 *   without (goal ≤ 1.15); then N more with `kubectl apply --server-side -f` of one List file (the toolchain's
 *   kubectl, which sends them one after another), with ÷ without;
 * - interleaved batches: after the rounds, B batches of M one-by-one applies in each arm, alternating ABBA batch by
 *   batch in two more namespaces (one per arm), so that a drift of the machine's speed, which moves a whole arm of a
 *   round by ±20% here, weighs on both alike: wall time with ÷ without, and kube-apiserver CPU per write in each.
 *
 * The two arms differ in one thing only: the namespace. The admission policy and the webhook configurations
 * (components/instance-policy.ts and webhooks.ts, built from MyAppOperator settings as `pulumi up` would:
 * failurePolicy Fail, timeout 5 s, matchConditions) select, by namespaceSelector, exactly the run's "with"
 * namespaces; the "without" namespaces are twins outside it. Every namespace is fresh, labelled
 * `pod-security.kubernetes.io/enforce: baseline` by default (so the platform's admission adds `podSecurityLevel:
 * Baseline` to each instance, and the run checks it did, and only with the admission; with
 * BENCH_ADMISSION_POD_SECURITY=none, unlabelled, no webhook is called: the policy's rules are the apiserver's, and the
 * validating webhook is called only for instances with a volume or a chart, or where a budget applies), and removed
 * with its instances before the next arm. Arms alternate ABBA over rounds (without, with; with, without)
 * so neither profits from going first.
 *
 * One operator process serves the webhooks (`operatorFlags(settings)`, external placement, the admin kubeconfig,
 * no leader election), and its controller watches only an empty namespace of its own: it does not reconcile the
 * benchmark's instances, so neither arm carries a reconcile load (README: why). The policy admits every instance
 * (maxReplicas 10, allowedRegistries docker.io/library, no namespace budget).
 *
 * BENCH_ADMISSION_DEFAULTS is MyAppOperator's `webhooks.defaults`, installed as the component does: `auto` (the
 * component's default) adds the MutatingAdmissionPolicy (components/defaults-policy.ts) beside the mutating webhook
 * where the cluster serves it, so the webhook is called only where the policy is missing (on Kubernetes 1.36, never);
 * `webhook` installs the webhook alone, every default a call; `policy` the policy alone.
 *
 * Knobs: BENCH_ADMISSION_RATE (20/s), BENCH_ADMISSION_SECONDS (30 per arm and round), BENCH_ADMISSION_INSTANCES
 * (1000), BENCH_ADMISSION_CONCURRENCY (10), BENCH_ADMISSION_ROUNDS (2), BENCH_ADMISSION_BATCHES (20 per arm),
 * BENCH_ADMISSION_BATCH_SIZE (50), BENCH_ADMISSION_POD_SECURITY (baseline), BENCH_ADMISSION_DEFAULTS (auto).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { apiVersion, kind } from "../api/index.ts";
import { servesDefaultsPolicy } from "../components/cluster-admission-apis.ts";
import { namespaceDefaultsPolicy } from "../components/defaults-policy.ts";
import { operatorFlags } from "../components/operator-flags.ts";
import { resolveSettings, describeIssues } from "../components/settings.ts";
import { instancePolicy } from "../components/instance-policy.ts";
import { operatorWebhookConfigurations, type NamespaceDefaults } from "../components/webhooks.ts";
import type { KubeClient, KubeObject } from "../kube/index.ts";
import { clusterStatus } from "../tools/lib/cluster.ts";
import { freePort } from "../tools/lib/operator-launcher.ts";
import { toolchainBinDir } from "../tools/lib/paths.ts";
import type { Benchmark, BenchContext, BenchmarkResult, Metric } from "./support/benchmark.ts";
import { removeFleet } from "./support/cleanup.ts";
import { benchFieldManager, ensureCrd } from "./support/cluster.ts";
import { forEachLimit } from "./support/fleet.ts";
import { startOperator, type OperatorProcess } from "./support/operator-process.ts";
import { histogramQuantile, samplesSince, scrape, sum, type Sample } from "./support/prometheus.ts";
import { cpuSeconds } from "./support/process-stats.ts";
import { integerSetting } from "./support/settings.ts";
import { max, quantile, round } from "./support/stats.ts";
import { pause, waitUntil } from "./support/wait.ts";

export type Arm = "without" | "with";

/**
 * Which namespaces the run writes to (BENCH_ADMISSION_POD_SECURITY):
 * - "baseline" (default): labelled `pod-security.kubernetes.io/enforce: baseline`, so both webhooks are called and
 *   the mutating one adds `podSecurityLevel: Baseline` to each instance (the run checks it did);
 * - "none": unlabelled, as most namespaces are: the mutating webhook's namespaceSelector leaves them out (it has no
 *   default to add there), and each write costs one call, the validating one.
 */
export type PodSecurityMode = "baseline" | "none";
const podSecurityModes: readonly PodSecurityMode[] = ["baseline", "none"];

/** The knob, or an error naming it and what it allows. */
export function podSecurityMode(raw = process.env["BENCH_ADMISSION_POD_SECURITY"]): PodSecurityMode {
  if (raw === undefined || raw === "") return "baseline";
  if ((podSecurityModes as readonly string[]).includes(raw)) return raw as PodSecurityMode;
  throw new Error(`BENCH_ADMISSION_POD_SECURITY must be one of ${podSecurityModes.join(", ")}, got "${raw}"`);
}

/** What gives the namespace default (BENCH_ADMISSION_DEFAULTS): MyAppOperator's `webhooks.defaults`. */
export function defaultsMode(raw = process.env["BENCH_ADMISSION_DEFAULTS"]): NamespaceDefaults {
  if (raw === undefined || raw === "") return "auto";
  if (raw === "auto" || raw === "webhook" || raw === "policy") return raw;
  throw new Error(`BENCH_ADMISSION_DEFAULTS must be one of auto, webhook, policy, got "${raw}"`);
}

function podSecurityLabels(mode: PodSecurityMode): Record<string, string> {
  return mode === "baseline" ? { "pod-security.kubernetes.io/enforce": "baseline" } : {};
}
const image = "nginx:1.27";
/**
 * Seconds of the same steady dry-runs before each measured phase, not counted: connections (bench → apiserver →
 * webhook) open and the operator's code is compiled before the first sample (a first arm after its start measured
 * a cold process otherwise: p50 100 ms in a trial).
 */
const warmUpSeconds = 5;
const execFileAsync = promisify(execFile);

export const admission: Benchmark = {
  name: "admission",
  description: "MyAppInstance writes with the operator's admission webhooks vs without: dry-run latency, N applies",
  budgetMs: 20 * 60_000,
  headline: [
    { metric: "withoutP50Ms", header: "admit p50 ms no webhook" },
    { metric: "withP50Ms", header: "admit p50 ms webhooks" },
    { metric: "withP99Ms", header: "admit p99 ms webhooks" },
    { parameter: "instances", header: "apply N" },
    { metric: "applyRatio", header: "apply N webhooks ×" },
    { metric: "kubectlRatio", header: "kubectl apply N webhooks ×" },
  ],
  run,
};

/** A valid instance as a user writes it: no podSecurityLevel, so the mutating webhook has work. */
function instance(namespace: string, name: string, replicas = 2): KubeObject {
  return { apiVersion, kind, metadata: { name, namespace }, spec: { replicas, image, port: 80 } };
}

/** One arm of the run: which, in which round, in which (fresh) namespace. */
export interface ArmStep {
  readonly arm: Arm;
  readonly round: number;
  readonly namespace: string;
}

/**
 * The arms in the order they run, ABBA: without, with; with, without; ... so that over an even number of rounds
 * each arm goes first as often as the other, and a drift in the machine's load weighs on both alike.
 */
export function armPlan(name: string, rounds: number): ArmStep[] {
  return Array.from({ length: rounds }, (_, r): Arm[] =>
    r % 2 === 0 ? ["without", "with"] : ["with", "without"],
  ).flatMap((arms, r) => arms.map((arm) => ({ arm, round: r + 1, namespace: `${name}-${arm}-${r + 1}` })));
}

/** The arms of the interleaved batches in the order they run: ABBA pairs (without, with; with, without; ...). */
export function batchOrder(batchesPerArm: number): Arm[] {
  return Array.from({ length: batchesPerArm }, (_, b): Arm[] =>
    b % 2 === 0 ? ["without", "with"] : ["with", "without"],
  ).flat();
}

/** The interleaved batches' totals per arm: wall seconds and writes. */
type BatchTotals = Readonly<Record<Arm, { seconds: number; writes: number }>>;

interface LatencyPhase {
  /** Apply sent → answered, ms, one per admitted request. */
  readonly samples: number[];
  readonly errors: string[];
  /** How late the latest request left against its schedule (the benchmark's own timers), ms. */
  readonly maxLagMs: number;
  /** Requests per second actually sent. */
  readonly rate: number;
}

/** CPU seconds by process: the operator, kube-apiserver, etcd, and the benchmark itself. */
type Cpu = Readonly<Record<CpuSubject, number>>;
type CpuSubject = "operator" | "apiserver" | "etcd" | "bench";
const cpuSubjects: readonly CpuSubject[] = ["operator", "apiserver", "etcd", "bench"];

/** Reads the CPU seconds used so far by the processes of `pids` (NaN for one not found) and by this process. */
function cpuNow(pids: Readonly<Partial<Record<CpuSubject, number>>>): Cpu {
  const of = (subject: CpuSubject) => {
    const pid = pids[subject];
    return pid === undefined ? NaN : (cpuSeconds(pid) ?? NaN);
  };
  const own = process.cpuUsage();
  return {
    operator: of("operator"),
    apiserver: of("apiserver"),
    etcd: of("etcd"),
    bench: (own.user + own.system) / 1e6,
  };
}

function cpuSince(before: Cpu, pids: Readonly<Partial<Record<CpuSubject, number>>>): Cpu {
  const now = cpuNow(pids);
  return Object.fromEntries(cpuSubjects.map((subject) => [subject, now[subject] - before[subject]])) as Cpu;
}

interface ArmResult {
  readonly arm: Arm;
  readonly round: number;
  readonly namespace: string;
  readonly latency: LatencyPhase;
  /** The operator's webhook metrics over the steady phase (controller_runtime_webhook_*, this phase only). */
  readonly webhookSteady: readonly Sample[];
  /** Webhook calls the operator served during this arm (all phases). */
  readonly webhookCalls: number;
  readonly applySeconds: number;
  readonly kubectlSeconds: number;
  /** CPU seconds (user + system) each process used during the N applies of 10 in flight. */
  readonly applyCpu: Cpu;
  /** Stored instances with the webhook's default (spec.podSecurityLevel Baseline). */
  readonly mutated: number;
  readonly stored: number;
}

async function run(context: BenchContext): Promise<BenchmarkResult> {
  const { client, signal, log } = context;
  const rate = integerSetting("BENCH_ADMISSION_RATE", 20);
  const seconds = integerSetting("BENCH_ADMISSION_SECONDS", 30);
  const instances = integerSetting("BENCH_ADMISSION_INSTANCES", 1000);
  const concurrency = integerSetting("BENCH_ADMISSION_CONCURRENCY", 10);
  const rounds = integerSetting("BENCH_ADMISSION_ROUNDS", 2);
  const batches = integerSetting("BENCH_ADMISSION_BATCHES", 20);
  const batchSize = integerSetting("BENCH_ADMISSION_BATCH_SIZE", 50);
  const podSecurity = podSecurityMode();
  const defaults = defaultsMode();
  const kubeconfig = process.env.KUBECONFIG ?? "";
  await ensureCrd(client, signal);

  const id = randomBytes(3).toString("hex");
  const name = `bench-adm-${id}`;
  const system = `${name}-sys`;
  const idle = `${name}-idle`;
  const plan = armPlan(name, rounds);
  const batchNamespaces: Readonly<Record<Arm, string>> = {
    with: `${name}-with-batches`,
    without: `${name}-without-batches`,
  };
  const withNamespaces = [
    ...plan.filter((step) => step.arm === "with").map((step) => step.namespace),
    batchNamespaces.with,
  ];

  const port = await freePort();
  const resolved = resolveSettings(name, {
    namespace: system,
    operatorPlacement: "external",
    webhooks: { url: `https://127.0.0.1:${port}`, defaults },
    // Only the namespaceSelector of the configurations comes from this list: the operator gets --namespaces=idle.
    watchNamespaces: withNamespaces,
    policy: { maxReplicas: 10, allowedRegistries: ["docker.io/library"] },
  });
  if (!resolved.ok) throw new Error(describeIssues("admission benchmark settings", resolved.issues));
  const { settings } = resolved;
  const configurations = operatorWebhookConfigurations(settings);
  const rules = instancePolicy(settings);
  // `auto` installs the policy where the cluster serves it, as my-app-operator.ts does.
  const policyServed =
    defaults !== "auto" ||
    servesDefaultsPolicy(JSON.parse(await client.raw("/apis/admissionregistration.k8s.io/v1")) as object);
  const defaulting = policyServed ? namespaceDefaultsPolicy(settings) : undefined;
  if (!configurations || !rules) throw new Error("the settings have the webhooks off");
  // The whole of the platform's admission, as the component installs it: the policies the apiserver decides itself
  // (instance-policy.ts, defaults-policy.ts), then the webhooks.
  const admissionObjects = [
    rules.policy,
    rules.binding,
    ...(defaulting ? [defaulting.policy, defaulting.binding] : []),
    ...(configurations.mutating ? [configurations.mutating] : []),
    configurations.validating,
  ];

  // kubectl's file: N instances in one List, written per arm (the namespace differs).
  const scratch = mkdtempSync(path.join(tmpdir(), "bench-admission-"));
  const listFile = (namespace: string) => {
    const items = Array.from({ length: instances }, (_, i) => instance(namespace, `kubectl-${i}`));
    const file = path.join(scratch, `${namespace}.json`);
    writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "List", items }));
    return file;
  };
  const created: string[] = [];
  let operator: OperatorProcess | undefined;
  try {
    for (const namespace of [system, idle]) {
      await createBenchNamespace(client, namespace, podSecurity);
      created.push(namespace);
    }
    // The configurations first (their selector names only namespaces of this run, none of which exists yet), then
    // the operator, which injects its CA into them.
    for (const object of admissionObjects)
      await client.apply(object as unknown as KubeObject, { fieldManager: benchFieldManager, force: true });
    log(`webhook configurations ${name} (failurePolicy Fail) select ${withNamespaces.join(", ")}`);
    const flags = operatorFlags(settings).filter(
      (flag) => !/^--(namespaces|metrics-bind-address|metrics-secure|health-probe-bind-address|log-level)\b/.test(flag),
    );
    // At the deployed log level (info: an admitted request is not logged); the webhook metrics time each call.
    operator = await startOperator({
      namespaces: [idle],
      args: flags,
      // BENCH_TS_NODE_OPTIONS adds Node flags for a profile, as in side-by-side.
      nodeOptions: (process.env.BENCH_TS_NODE_OPTIONS ?? "").split(" ").filter(Boolean),
      signal,
    });
    log(`operator pid ${operator.pid} serves https://127.0.0.1:${port}; its controller watches only ${idle}`);
    // CPU is read from the local cluster's own processes (kwokctl's pid files), when this is that cluster.
    const components = (await clusterStatus().catch(() => undefined))?.components ?? [];
    const componentPid = (component: string) => components.find((c) => c.name === component && c.running)?.pid;
    const pids = { operator: operator.pid, apiserver: componentPid("kube-apiserver"), etcd: componentPid("etcd") };

    const results: ArmResult[] = [];
    for (const step of plan) {
      if (signal.aborted) break;
      await createBenchNamespace(client, step.namespace, podSecurity);
      created.push(step.namespace);
      if (step.arm === "with" && results.every((result) => result.arm !== "with")) {
        await webhooksAnswering(client, step.namespace, podSecurity, operator, signal);
      }
      log(`round ${step.round}, ${step.arm} webhooks (${step.namespace})`);
      results.push(
        await measureArm(client, operator, {
          ...step,
          kubeconfig,
          listFile,
          pids,
          rate,
          seconds,
          instances,
          concurrency,
          signal,
          log,
        }),
      );
      await removeFleet(client, kubeconfig, step.namespace, signal, log);
      created.splice(created.indexOf(step.namespace), 1);
      await pause(3_000, signal); // let the deletion's own work settle before the next arm
    }
    if (signal.aborted) throw new Error("gave up: the budget is spent");
    for (const namespace of Object.values(batchNamespaces)) {
      await createBenchNamespace(client, namespace, podSecurity);
      created.push(namespace);
    }
    log(`interleaved batches: ${batches} of ${batchSize} one-by-one applies per arm, ABBA`);
    const batchTotals = await interleavedBatches(client, batchNamespaces, batches, batchSize, signal);
    log(
      `  without ${round(batchTotals.without.seconds, 2)} s, with ${round(batchTotals.with.seconds, 2)} s ` +
        `(${round(batchTotals.with.seconds / batchTotals.without.seconds, 2)}×)`,
    );
    if (signal.aborted) throw new Error("gave up: the budget is spent");
    return report(results, batchTotals, {
      rate,
      seconds,
      instances,
      concurrency,
      rounds,
      batches,
      batchSize,
      podSecurity,
      defaults: defaulting && configurations.mutating ? `${defaults}: policy, then webhook` : defaults,
    });
  } finally {
    // A failurePolicy Fail webhook without its server would refuse every write it selects: it goes first.
    for (const object of admissionObjects.toReversed())
      await client
        .delete("admissionregistration.k8s.io/v1", object.kind ?? "", object.metadata?.name ?? "")
        .catch(() => undefined);
    await operator?.stop();
    const cleanup = AbortSignal.timeout(5 * 60_000);
    for (const namespace of created)
      await removeFleet(client, kubeconfig, namespace, cleanup, log).catch((error: unknown) =>
        log(`could not remove ${namespace}: ${String(error)}`),
      );
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function createBenchNamespace(client: KubeClient, namespace: string, mode: PodSecurityMode): Promise<void> {
  await client.create({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace, labels: { "myapp-bench": "true", ...podSecurityLabels(mode) } },
  });
}

/**
 * Waits until the webhooks are in the path of a dry-run in a selected namespace (the CA is injected, the server
 * answers): with the Pod Security label it comes back mutated; without, one over the policy's maxReplicas is
 * refused by the validating webhook.
 */
async function webhooksAnswering(
  client: KubeClient,
  namespace: string,
  mode: PodSecurityMode,
  operator: OperatorProcess,
  signal: AbortSignal,
): Promise<void> {
  const probe = instance(namespace, "probe");
  await waitUntil(
    "the webhooks to answer",
    async () => {
      if (mode === "none") {
        const refusal = await client
          .apply(instance(namespace, "probe", 11), { fieldManager: benchFieldManager, dryRun: true })
          .then(
            () => undefined,
            (error: unknown) => String(error),
          );
        if (!refusal?.includes("--max-replicas"))
          throw new Error(`11 replicas were not refused by the platform's admission (${refusal ?? "admitted"})`);
        return true;
      }
      const answered = await client.apply<KubeObject & { spec: { podSecurityLevel?: string } }>(probe, {
        fieldManager: benchFieldManager,
        dryRun: true,
      });
      if (answered.spec.podSecurityLevel !== "Baseline")
        throw new Error("admitted without the namespace default: the platform's admission is not in the path");
      return true;
    },
    { signal, timeoutMs: 60_000, intervalMs: 500 },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${operator.tail(30)}`);
  });
}

interface ArmOptions {
  readonly arm: Arm;
  readonly round: number;
  readonly namespace: string;
  readonly kubeconfig: string;
  /** A List of N instances to give to kubectl, with NAMESPACE where the arm's namespace goes. */
  readonly listFile: (namespace: string) => string;
  /** The processes whose CPU is read around the applies (the local cluster's, when found). */
  readonly pids: Readonly<Partial<Record<CpuSubject, number>>>;
  readonly rate: number;
  readonly seconds: number;
  readonly instances: number;
  readonly concurrency: number;
  readonly signal: AbortSignal;
  log(message: string): void;
}

async function measureArm(client: KubeClient, operator: OperatorProcess, options: ArmOptions): Promise<ArmResult> {
  const { namespace, signal } = options;
  const armStart = await scrape(operator.metricsUrl);
  const warmUp = await steadyDryRuns(client, namespace, "warm", options.rate, warmUpSeconds, signal);
  if (warmUp.errors.length > 0) throw new Error(`warm-up dry-runs in ${namespace} failed: ${warmUp.errors[0]}`);

  const steadyStart = await scrape(operator.metricsUrl);
  const latency = await steadyDryRuns(client, namespace, "probe", options.rate, options.seconds, signal);
  const webhookSteady = samplesSince(await scrape(operator.metricsUrl), steadyStart);
  const p = (q: number) => round(quantile(latency.samples, q), 1);
  options.log(
    `  ${latency.samples.length} dry-runs at ${latency.rate}/s: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms` +
      (latency.errors.length > 0 ? `, ${latency.errors.length} FAILED: ${latency.errors[0]}` : ""),
  );

  const names = Array.from({ length: options.instances }, (_, i) => `app-${i}`);
  const cpuBefore = cpuNow(options.pids);
  const from = performance.now();
  await forEachLimit(
    names,
    options.concurrency,
    async (instanceName) => {
      await client.apply(instance(namespace, instanceName), { fieldManager: benchFieldManager });
    },
    signal,
  );
  const applySeconds = (performance.now() - from) / 1000;
  const applyCpu = cpuSince(cpuBefore, options.pids);
  options.log(`  ${options.instances} applies, ${options.concurrency} in flight: ${round(applySeconds, 2)} s`);

  const file = options.listFile(namespace);
  const kubectlFrom = performance.now();
  await execFileAsync(
    path.join(process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir(), "kubectl"),
    ["--kubeconfig", options.kubeconfig, "apply", "--server-side", `--field-manager=${benchFieldManager}`, "-f", file],
    { signal, maxBuffer: 64 * 1024 * 1024 },
  );
  const kubectlSeconds = (performance.now() - kubectlFrom) / 1000;
  options.log(`  kubectl apply --server-side of ${options.instances} more: ${round(kubectlSeconds, 2)} s`);
  const { items } = await client.list<KubeObject & { spec: { podSecurityLevel?: string } }>(apiVersion, kind, {
    namespace,
  });
  const mutated = items.filter((item) => item.spec.podSecurityLevel === "Baseline").length;
  if (items.length !== 2 * options.instances)
    throw new Error(
      `${namespace} holds ${items.length} instances after both bulk phases, not ${2 * options.instances}`,
    );

  return {
    arm: options.arm,
    round: options.round,
    namespace,
    latency,
    webhookSteady,
    webhookCalls: sum(samplesSince(await scrape(operator.metricsUrl), armStart), webhookRequests),
    applySeconds,
    kubectlSeconds,
    applyCpu,
    mutated,
    stored: items.length,
  };
}

/**
 * `batchesPerArm` batches of `batchSize` server-side applies, one after another, in each arm's namespace, the arms
 * alternating batch by batch (batchOrder). Wall time only: kube-apiserver's CPU, read around batches of ~0.2 s of
 * work, varied more between batches than between the arms in a trial (the arm without admission came out higher).
 */
async function interleavedBatches(
  client: KubeClient,
  namespaces: Readonly<Record<Arm, string>>,
  batchesPerArm: number,
  batchSize: number,
  signal: AbortSignal,
): Promise<BatchTotals> {
  const totals = {
    with: { seconds: 0, writes: 0 },
    without: { seconds: 0, writes: 0 },
  };
  let next = 0;
  for (const arm of batchOrder(batchesPerArm)) {
    if (signal.aborted) break;
    const names = Array.from({ length: batchSize }, () => `batch-${next++}`);
    const from = performance.now();
    for (const instanceName of names)
      await client.apply(instance(namespaces[arm], instanceName), { fieldManager: benchFieldManager });
    totals[arm].seconds += (performance.now() - from) / 1000;
    totals[arm].writes += batchSize;
  }
  return totals;
}

/**
 * `rate` server-side-apply dry-runs a second for `seconds`, open loop: request i leaves at start + i/rate whether
 * or not the earlier ones have been answered, so a slow answer cannot slow the offered load (and hide itself).
 */
async function steadyDryRuns(
  client: KubeClient,
  namespace: string,
  prefix: string,
  rate: number,
  seconds: number,
  signal: AbortSignal,
): Promise<LatencyPhase> {
  const total = rate * seconds;
  const intervalMs = 1000 / rate;
  const samples: number[] = [];
  const errors: string[] = [];
  const pending: Promise<void>[] = [];
  let maxLagMs = 0;
  const start = performance.now() + 20;
  for (let i = 0; i < total && !signal.aborted; i++) {
    const due = start + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const sent = performance.now();
    maxLagMs = Math.max(maxLagMs, sent - due);
    pending.push(
      client.apply(instance(namespace, `${prefix}-${i}`), { fieldManager: benchFieldManager, dryRun: true }).then(
        () => void samples.push(performance.now() - sent),
        (error: unknown) => void errors.push(String(error)),
      ),
    );
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - start) / 1000;
  return { samples, errors, maxLagMs, rate: round(pending.length / Math.max(elapsed, seconds), 1) };
}

const webhookRequests = "controller_runtime_webhook_requests_total";
const webhookLatency = "controller_runtime_webhook_latency_seconds";

/** The `q`-quantile of the webhook server's time for `path` (/mutate, /validate), ms, from its histogram. */
export function webhookQuantileMs(samples: readonly Sample[], path: string, q: number): number {
  return histogramQuantile(samples, webhookLatency, q, (labels) => labels.webhook === path) * 1000;
}

const cpuLabels: Readonly<Record<CpuSubject, string>> = {
  operator: "operator",
  apiserver: "kube-apiserver",
  etcd: "etcd",
  bench: "benchmark process",
};

function report(
  results: readonly ArmResult[],
  batches: BatchTotals,
  parameters: {
    rate: number;
    seconds: number;
    instances: number;
    concurrency: number;
    rounds: number;
    batches: number;
    batchSize: number;
    podSecurity: PodSecurityMode;
    /** `webhooks.defaults`, and with `auto` what it installed. */
    defaults: string;
  },
): BenchmarkResult {
  const of = (arm: Arm) => results.filter((result) => result.arm === arm);
  const samples = (arm: Arm) => of(arm).flatMap((result) => result.latency.samples);
  const webhook = (path: string, q: number) =>
    webhookQuantileMs(
      of("with").flatMap((result) => result.webhookSteady),
      path,
      q,
    );
  const median = (arm: Arm, figure: (result: ArmResult) => number) => quantile(of(arm).map(figure), 0.5);
  const applyMedian = (arm: Arm) => median(arm, (result) => result.applySeconds);
  const kubectlMedian = (arm: Arm) => median(arm, (result) => result.kubectlSeconds);
  const ms = (id: string, label: string, value: number): Metric => ({ id, label, value: round(value, 1), unit: "ms" });
  const steady = `${parameters.rate}/s dry-run apply`;
  const n = parameters.instances;
  return {
    parameters: { ...parameters, policy: "maxReplicas 10, allowedRegistries docker.io/library, no namespace budget" },
    metrics: [
      ms("withoutP50Ms", `${steady}, no webhooks, p50`, quantile(samples("without"), 0.5)),
      ms("withoutP99Ms", `${steady}, no webhooks, p99`, quantile(samples("without"), 0.99)),
      ms("withP50Ms", `${steady}, webhooks, p50`, quantile(samples("with"), 0.5)),
      ms("withP99Ms", `${steady}, webhooks, p99`, quantile(samples("with"), 0.99)),
      // An unlabelled namespace never calls /mutate, nor does any where a policy gives the default: no figure
      // rather than NaN.
      ...(!Number.isNaN(webhook("/mutate", 0.5))
        ? [
            ms("mutateP50Ms", "webhook server, /mutate, p50 (histogram)", webhook("/mutate", 0.5)),
            ms("mutateP99Ms", "webhook server, /mutate, p99 (histogram)", webhook("/mutate", 0.99)),
          ]
        : []),
      // Called only for instances with a volume or a chart, or under a budget: none in this run's policy.
      ...(Number.isNaN(webhook("/validate", 0.5))
        ? []
        : [
            ms("validateP50Ms", "webhook server, /validate, p50 (histogram)", webhook("/validate", 0.5)),
            ms("validateP99Ms", "webhook server, /validate, p99 (histogram)", webhook("/validate", 0.99)),
          ]),
      {
        id: "dryRunErrors",
        label: "dry-runs refused or failed",
        value: results.reduce((sum, result) => sum + result.latency.errors.length, 0),
        unit: "count",
        expected: 0,
      },
      ms("maxLagMs", "latest dry-run send against its schedule", max(results.map((r) => r.latency.maxLagMs))),
      {
        id: "applyWithoutS",
        label: `${n} applies, no webhooks, median`,
        value: round(applyMedian("without"), 2),
        unit: "s",
      },
      { id: "applyWithS", label: `${n} applies, webhooks, median`, value: round(applyMedian("with"), 2), unit: "s" },
      {
        id: "applyRatio",
        label: `${n} applies, webhooks ÷ no webhooks (goal ≤ 1.15)`,
        value: round(applyMedian("with") / applyMedian("without"), 2),
        unit: "×",
      },
      ...cpuSubjects.flatMap((subject) =>
        (["without", "with"] as const).map((arm): Metric => ({
          id: `${subject}Cpu${arm === "with" ? "With" : "Without"}S`,
          label: `${cpuLabels[subject]} CPU during the ${n} applies, ${arm === "with" ? "webhooks" : "no webhooks"}, median`,
          value: round(
            median(arm, (result) => result.applyCpu[subject]),
            2,
          ),
          unit: "s",
        })),
      ),
      {
        id: "kubectlWithoutS",
        label: `kubectl apply --server-side of ${n}, no webhooks, median`,
        value: round(kubectlMedian("without"), 2),
        unit: "s",
      },
      {
        id: "kubectlWithS",
        label: `kubectl apply --server-side of ${n}, webhooks, median`,
        value: round(kubectlMedian("with"), 2),
        unit: "s",
      },
      {
        id: "kubectlRatio",
        label: `kubectl apply --server-side of ${n}, webhooks ÷ no webhooks`,
        value: round(kubectlMedian("with") / kubectlMedian("without"), 2),
        unit: "×",
      },
      {
        id: "batchRatio",
        label: `interleaved batches of ${parameters.batchSize} one-by-one applies, webhooks ÷ no webhooks`,
        value: round(batches.with.seconds / batches.without.seconds, 2),
        unit: "×",
      },
      {
        id: "mutatedWith",
        label: "stored instances with the webhook's default, webhooks",
        value: of("with").reduce((sum, result) => sum + result.mutated, 0),
        unit: "count",
        // Only a labelled namespace has a default to add; an unlabelled one never calls the mutating webhook.
        expected: parameters.podSecurity === "baseline" ? 2 * n * of("with").length : 0,
      },
      {
        id: "mutatedWithout",
        label: "stored instances with that default, no webhooks",
        value: of("without").reduce((sum, result) => sum + result.mutated, 0),
        unit: "count",
        expected: 0,
      },
      {
        id: "webhookCallsWithout",
        label: "webhook calls during the no-webhook arms",
        value: of("without").reduce((sum, result) => sum + result.webhookCalls, 0),
        unit: "count",
        expected: 0,
      },
    ],
    details: {
      arms: results.map((result) => ({
        arm: result.arm,
        round: result.round,
        namespace: result.namespace,
        dryRuns: result.latency.samples.length,
        sentPerSecond: result.latency.rate,
        p50Ms: round(quantile(result.latency.samples, 0.5), 1),
        p90Ms: round(quantile(result.latency.samples, 0.9), 1),
        p99Ms: round(quantile(result.latency.samples, 0.99), 1),
        maxMs: round(max(result.latency.samples), 1),
        maxLagMs: round(result.latency.maxLagMs, 1),
        errors: result.latency.errors.slice(0, 5),
        webhookCalls: result.webhookCalls,
        applySeconds: round(result.applySeconds, 2),
        kubectlSeconds: round(result.kubectlSeconds, 2),
        applyCpuSeconds: Object.fromEntries(
          Object.entries(result.applyCpu).map(([subject, seconds]) => [subject, round(seconds, 2)]),
        ),
        stored: result.stored,
        mutated: result.mutated,
      })),
    },
  };
}
