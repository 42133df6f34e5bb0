/**
 * Side by side: the TypeScript operator and the Go controller-runtime peer (tools/go/controller-peer) converge
 * the same fleet on the same cluster in the same run, each in its own namespace and through its own counting
 * proxy, one after the other, the order alternating between rounds; the floor (the same children created
 * directly, no operator) runs in the same rounds. Every figure is then also a ratio TS ÷ Go from that one run.
 *
 * Per operator and round:
 *  1. start it; create N instances at once (10 creates in flight); time until all are Ready at their spec (a
 *     watch of the instances); requests per instance, CPU seconds and peak RSS of the process up to then;
 *  2. 60 s idle: writes and reads; then a restart (SIGTERM, start again) and 60 s: writes and reads;
 *  3. an idle operator and a new instance: create → the operator's first request naming it (seen by its proxy);
 *     then one more restart, and one instance changed as soon as the operator answers ready → Ready there (it
 *     looks at every instance again after a start: does the change wait behind that?);
 *  4. single changes on the converged fleet (image of one instance) → that instance Ready at the new image, p50/p99;
 *  5. a rollout of all N (every image changed at once) → all Ready at it;
 *  6. the operator stopped, the fleet and namespace removed (fast: see support/cleanup.ts).
 * The floor does 1, 4 and 5 on the workloads themselves (Ready: the workload's rollout is complete).
 */
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { serviceName, workloadName } from "../api/child-names.ts";
import type { Benchmark, BenchContext, BenchmarkResult, Metric } from "./support/benchmark.ts";
import { removeFleet } from "./support/cleanup.ts";
import { createNamespace, ensureCrd } from "./support/cluster.ts";
import {
  isWrite,
  readsOf,
  since,
  startCountingProxyThread,
  watchesOf,
  writesOf,
  writesWithoutEventsOf,
  type Counts,
  type CountingProxy,
} from "./support/counting-proxy.ts";
import { floorFleet, forEachLimit, instanceFleet, Readiness, type Fleet, type FleetSpec } from "./support/fleet.ts";
import { ensureFleetCapacity } from "./support/fleet-capacity.ts";
import { loadAverages } from "./support/process-stats.ts";
import { round, quantile } from "./support/stats.ts";
import { startSubject, type OperatorName, type Subject } from "./support/subjects.ts";
import { pause, waitUntil } from "./support/wait.ts";

export type SubjectName = "floor" | OperatorName;

/** How long an operator may take to list what it watches (10,000 instances: 3 kinds × 10 pages). */
const operatorReadyTimeoutMs = (instances: number) => 30_000 + instances * 10;

export interface Scenario {
  readonly instances: number;
  readonly storage: string | undefined;
  readonly rounds: number;
  /** Single changes timed on the converged fleet. */
  readonly changes: number;
  /** Seconds of the idle and after-restart windows. */
  readonly windowSeconds: number;
  /** New instances created on an idle operator, each timed. */
  readonly newInstances: number;
  /** --concurrency of the TS operator and --max-concurrent-reconciles of the peer. */
  readonly concurrency: number;
  /** The rollout of all N; off to save its time (minutes at N = 1000 on a busy machine). */
  readonly rollout: boolean;
  /** Which subjects run (all three by default); at N = 10,000 the floor may come from bench/cluster-capacity.ts. */
  readonly subjects?: readonly SubjectName[];
}

const images = ["nginx:1.27", "nginx:1.27.1", "nginx:1.27.2"] as const;
const createParallelism = 10;
const mib = 1024 * 1024;

/** The figures of one subject in one round; absent where they do not apply (the floor has no process). */
export interface SubjectFigures {
  readonly subject: SubjectName;
  readonly round: number;
  readonly loadBefore: number;
  readonly allReadyS: number;
  readonly changeP50Ms: number;
  readonly changeP99Ms: number;
  readonly rolloutS: number;
  readonly writesPerInstance?: number;
  /** The same without Events (the Go peer records none). */
  readonly writesWithoutEventsPerInstance?: number;
  /** Writes per instance from the rollout's first patch until 5 s without a write after all are Ready. */
  readonly rolloutWritesPerInstance?: number;
  readonly rolloutWritesWithoutEventsPerInstance?: number;
  readonly readsPerInstance?: number;
  readonly watches?: number;
  readonly convergeCpuS?: number;
  readonly totalCpuS?: number;
  readonly peakRssMiB?: number;
  readonly idleWrites?: number;
  readonly idleReads?: number;
  readonly restartWrites?: number;
  readonly restartReads?: number;
  readonly newInstanceP50Ms?: number;
  readonly newInstanceMaxMs?: number;
  /** Restarted once more, then one instance changed at once: ms until it was Ready at the new image. */
  readonly restartChangeMs?: number;
  /** Requests by `<verb> <resource>` while converging, for the record. */
  readonly convergeRequests?: Counts;
}

/** The order of the subjects in round `index` (0-based): alternating, so neither operator always goes first. */
export function roundOrder(index: number, subjects: readonly SubjectName[] = allSubjects): SubjectName[] {
  const order: SubjectName[] = index % 2 === 0 ? ["floor", "go", "ts"] : ["ts", "go", "floor"];
  return order.filter((subject) => subjects.includes(subject));
}

export const allSubjects: readonly SubjectName[] = ["floor", "go", "ts"];

export function sideBySide(name: string, scenario: Scenario, description?: string): Benchmark {
  const perSubjectMs = 30 * 60_000 + scenario.instances * 1_500;
  const subjectCount = (scenario.subjects ?? allSubjects).length;
  return {
    name,
    description:
      description ??
      `TS operator vs Go controller-runtime peer vs floor: ${scenario.instances} instances` +
        `${scenario.storage ? ` with ${scenario.storage} storage` : ""}, ${scenario.rounds} round(s)`,
    headline: [],
    budgetMs: scenario.rounds * subjectCount * perSubjectMs,
    run: (context) => runScenario(context, scenario),
  };
}

async function runScenario(context: BenchContext, scenario: Scenario): Promise<BenchmarkResult> {
  const { client, signal, log } = context;
  await ensureCrd(client, signal);
  // One subject's fleet at a time (the previous one's namespace is gone before the next starts), plus the probes.
  const pods = (scenario.instances + scenario.newInstances) * fleetReplicas;
  await ensureFleetCapacity(client, { services: scenario.instances + scenario.newInstances, pods }, signal, log);
  const kubeconfig = process.env.KUBECONFIG ?? "";
  const figures: SubjectFigures[] = [];
  for (let index = 0; index < scenario.rounds; index++) {
    for (const subject of roundOrder(index, scenario.subjects)) {
      const prefix = `round ${index + 1}/${scenario.rounds} ${subject}`;
      const say = (message: string) => log(`${prefix}: ${message}`);
      figures.push(await runSubject({ client, signal, log: say }, kubeconfig, subject, index + 1, scenario));
      say(`done: ${JSON.stringify(withoutDetail(figures.at(-1)!))}`);
    }
  }
  return {
    parameters: {
      ...scenario,
      storage: scenario.storage ?? "none",
      subjects: (scenario.subjects ?? allSubjects).join(","),
    },
    metrics: summaryMetrics(figures),
    details: { rounds: figures },
  };
}

function withoutDetail(figures: SubjectFigures): Partial<SubjectFigures> {
  return Object.fromEntries(Object.entries(figures).filter(([key]) => key !== "convergeRequests"));
}

const fleetReplicas = 1;

const fleetSpec = (scenario: Scenario, image: string): FleetSpec => ({
  replicas: fleetReplicas,
  image,
  storage: scenario.storage,
});

/** One subject's share of a round, in its own namespace, cleaned up whatever happens. */
async function runSubject(
  context: BenchContext,
  kubeconfig: string,
  subject: SubjectName,
  roundNumber: number,
  scenario: Scenario,
): Promise<SubjectFigures> {
  const { client, signal, log } = context;
  const n = scenario.instances;
  const namespace = await createNamespace(client, `bench-${subject}`);
  const loadBefore = round(loadAverages()[0], 2);
  log(`namespace ${namespace}, load ${loadBefore}`);
  const watchStop = new AbortController();
  const stopWatch = () => watchStop.abort();
  signal.addEventListener("abort", stopWatch, { once: true });
  let proxy: CountingProxy | undefined;
  let operator: Subject | undefined;
  const processes: Subject[] = [];
  // Starts the operator behind `through` (and again after a SIGTERM: a restart); resolves once it answers ready.
  const launch = async (name: OperatorName, through: CountingProxy) => {
    const started = await startSubject(name, {
      kubeconfig: through.kubeconfig,
      namespace,
      concurrency: scenario.concurrency,
      readyTimeoutMs: operatorReadyTimeoutMs(scenario.instances),
      signal,
    });
    processes.push(started);
    return started;
  };
  try {
    let fleet: Fleet;
    if (subject === "floor") {
      fleet = floorFleet(client, namespace, fleetSpec(scenario, images[0]));
    } else {
      proxy = await startCountingProxyThread(kubeconfig, subject, { answers: requestLogDir !== undefined });
      if (requestLogDir) keepRequestLog(proxy, path.join(requestLogDir, `${subject}-${namespace}.jsonl`));
      operator = await launch(subject, proxy);
      log(`operator pid ${operator.pid} ready`);
      fleet = instanceFleet(client, namespace, fleetSpec(scenario, images[0]));
    }
    const readiness = new Readiness(fleet);
    const start = await client.list(fleet.watched.apiVersion, fleet.watched.kind, { namespace, limit: 1 });
    const watching = readiness
      .follow(client, namespace, start.metadata?.resourceVersion ?? "0", watchStop.signal)
      .catch((error: unknown) => log(`watch failed: ${String(error)}`));
    const names = Array.from({ length: n }, (_, i) => `app-${String(i).padStart(5, "0")}`);
    const readyTimeoutMs = 10 * 60_000 + n * 1_000;
    const requestsSoFar = () => (proxy ? `, ${writesOf(proxy.counts())} writes, ${readsOf(proxy.counts())} reads` : "");

    // 1. converge
    const cpuAtStart = operator?.cpuSeconds() ?? 0;
    const createdAt = performance.now();
    let created = 0;
    const creating = forEachLimit(
      names,
      createParallelism,
      async (name) => {
        await fleet.create(name);
        created++;
      },
      signal,
    );
    const allReadyAt = await Promise.all([
      creating,
      readiness.until(`all ${n} Ready`, () => readiness.count(images[0]) >= n, {
        signal,
        timeoutMs: readyTimeoutMs,
        progress: () =>
          log(`converging: ${created}/${n} created, ${readiness.count(images[0])}/${n} Ready${requestsSoFar()}`),
      }),
    ]).then(([, at]) => at);
    const allReadyS = round((allReadyAt - createdAt) / 1000, 1);
    log(`all ${n} Ready in ${allReadyS} s${requestsSoFar()}`);

    let converged: Partial<SubjectFigures> = {};
    if (proxy && operator) {
      // Trailing writes of the last reconciles belong to converging; quiet = 5 s without a write.
      await quiet(proxy, signal);
      const counts = proxy.counts();
      converged = {
        writesPerInstance: round(writesOf(counts) / n, 2),
        writesWithoutEventsPerInstance: round(writesWithoutEventsOf(counts) / n, 2),
        readsPerInstance: round(readsOf(counts) / n, 2),
        watches: watchesOf(counts),
        convergeCpuS: round(operator.cpuSeconds() - cpuAtStart, 1),
        convergeRequests: counts,
      };
      log(`converged: ${JSON.stringify({ ...converged, convergeRequests: undefined })}`);

      const restartOperator = async () => {
        await operator!.stop();
        operator = await launch(subject as OperatorName, proxy!);
      };

      // 2. idle, then restart
      const idle = await window(proxy, scenario.windowSeconds * 1000, signal);
      log(`${scenario.windowSeconds} s idle: ${idle.writes} writes, ${idle.reads} reads`);
      await restartOperator();
      const restart = await window(proxy, scenario.windowSeconds * 1000, signal);
      log(
        `restarted (pid ${operator.pid}); ${scenario.windowSeconds} s after: ${restart.writes} writes, ${restart.reads} reads`,
      );
      converged = {
        ...converged,
        idleWrites: idle.writes,
        idleReads: idle.reads,
        restartWrites: restart.writes,
        restartReads: restart.reads,
      };

      // 3. an idle operator sees a new instance: its first request naming the instance or a child of it (an
      // operator that creates the children first, as ours does for an instance without a finalizer, writes the
      // instance itself only with the status)
      const seenMs: number[] = [];
      for (let i = 0; i < scenario.newInstances; i++) {
        const name = `new-${randomBytes(3).toString("hex")}`;
        const names = new Set([name, serviceName(name), workloadName(name)]);
        let seenAt: number | undefined;
        const unsubscribe = proxy.onRequest((info, at) => {
          if (seenAt === undefined && info.name !== undefined && names.has(info.name)) seenAt = at;
        });
        const sentAt = performance.now();
        await fleet.create(name);
        await waitUntil(`the operator to act on ${name}`, () => (seenAt !== undefined ? true : undefined), {
          signal,
          timeoutMs: 60_000,
          intervalMs: 10,
        });
        unsubscribe();
        seenMs.push(seenAt! - sentAt);
        await readiness.until(`${name} Ready`, () => readiness.isReadyAt(name, images[0]), {
          signal,
          timeoutMs: 120_000,
        });
        await pause(1_000, signal);
      }
      converged = {
        ...converged,
        newInstanceP50Ms: round(quantile(seenMs, 0.5), 0),
        newInstanceMaxMs: round(Math.max(...seenMs), 0),
      };
      log(`new instance seen after ${seenMs.map((ms) => Math.round(ms)).join(", ")} ms`);

      // 3b. restarted once more, one instance changed as the operator comes back: an operator looks at every
      // instance again after a start; does the change wait behind that look?
      await restartOperator();
      // names[0] is none of the single changes' instances below; the rollout moves it on like the rest.
      const restartName = names[0]!;
      const restartFrom = performance.now();
      await fleet.setImage(restartName, images[1]);
      const restartReadyAt = await readiness.until(
        `${restartName} Ready at ${images[1]}`,
        () => readiness.isReadyAt(restartName, images[1]),
        { signal, timeoutMs: 300_000 },
      );
      converged = { ...converged, restartChangeMs: round(restartReadyAt - restartFrom, 0) };
      log(`restarted; a change made as it came back was Ready in ${Math.round(restartReadyAt - restartFrom)} ms`);
    }

    // 4. single changes on the converged fleet
    const changeMs: number[] = [];
    for (let i = 0; i < scenario.changes; i++) {
      const name = names[Math.floor(((i + 0.5) * n) / scenario.changes)]!;
      const sentAt = performance.now();
      await fleet.setImage(name, images[1]);
      const readyAt = await readiness.until(
        `${name} Ready at ${images[1]}`,
        () => readiness.isReadyAt(name, images[1]),
        {
          signal,
          timeoutMs: 300_000,
        },
      );
      changeMs.push(readyAt - sentAt);
    }
    log(`single changes → Ready: ${changeMs.map((ms) => Math.round(ms)).join(", ")} ms`);

    // 5. rollout of all N
    if (!scenario.rollout) {
      watchStop.abort();
      await watching;
      return {
        subject,
        round: roundNumber,
        loadBefore,
        allReadyS,
        changeP50Ms: round(quantile(changeMs, 0.5), 0),
        changeP99Ms: round(quantile(changeMs, 0.99), 0),
        rolloutS: NaN,
        ...converged,
        ...(operator ? figuresOf(processes) : {}),
      };
    }
    const rolloutFrom = performance.now();
    const writesBeforeRollout = proxy ? proxy.counts() : undefined;
    let patched = 0;
    const patching = forEachLimit(
      names,
      createParallelism,
      async (name) => {
        await fleet.setImage(name, images[2]);
        patched++;
      },
      signal,
    );
    const rolledOutAt = await Promise.all([
      patching,
      readiness.until(`all ${n} Ready at ${images[2]}`, () => readiness.count(images[2]) >= n, {
        signal,
        timeoutMs: readyTimeoutMs,
        progress: () =>
          log(`rolling out: ${patched}/${n} changed, ${readiness.count(images[2])}/${n} Ready${requestsSoFar()}`),
      }),
    ]).then(([, at]) => at);
    const rolloutS = round((rolledOutAt - rolloutFrom) / 1000, 1);
    log(`rollout of all ${n} in ${rolloutS} s`);
    let rolloutWrites: Partial<SubjectFigures> = {};
    if (proxy && writesBeforeRollout) {
      // Trailing writes of the last reconciles (a final event) belong to the rollout, as they do to converging.
      await quiet(proxy, signal);
      const rolloutCounts = since(proxy.counts(), writesBeforeRollout);
      rolloutWrites = {
        rolloutWritesPerInstance: round(writesOf(rolloutCounts) / n, 2),
        rolloutWritesWithoutEventsPerInstance: round(writesWithoutEventsOf(rolloutCounts) / n, 2),
      };
      log(`rollout writes: ${JSON.stringify(rolloutCounts)}`);
    }
    watchStop.abort();
    await watching;

    return {
      subject,
      round: roundNumber,
      loadBefore,
      allReadyS,
      changeP50Ms: round(quantile(changeMs, 0.5), 0),
      changeP99Ms: round(quantile(changeMs, 0.99), 0),
      rolloutS,
      ...rolloutWrites,
      ...converged,
      ...(operator ? figuresOf(processes) : {}),
    };
  } catch (error) {
    if (operator) log(`operator's last lines:\n${operator.tail()}`);
    throw error;
  } finally {
    signal.removeEventListener("abort", stopWatch);
    watchStop.abort();
    for (const p of processes) await p.stop();
    await proxy?.close();
    // 6. cleanup, whatever happened: leave nothing behind for the next subject (not with the budget's signal:
    // a spent budget must still clean up).
    await removeFleet(client, kubeconfig, namespace, new AbortController().signal, log).catch((error: unknown) =>
      log(`cleanup of ${namespace} failed: ${String(error)}`),
    );
  }
}

/** CPU seconds of all the subject's processes, and the highest peak RSS among them. */
function figuresOf(processes: readonly Subject[]) {
  const totalCpuS = processes.reduce((sum, p) => sum + p.cpuSeconds(), 0);
  const peakRss = Math.max(...processes.map((p) => p.memory().peakRss));
  return { totalCpuS: round(totalCpuS, 1), peakRssMiB: round(peakRss / mib, 0) };
}

/** Waits until `proxy` has seen no write for 5 s (at most 2 min). */
export async function quiet(proxy: CountingProxy, signal: AbortSignal): Promise<void> {
  let lastWrite = performance.now();
  const unsubscribe = proxy.onRequest((info, at) => {
    if (isWrite(info)) lastWrite = at;
  });
  try {
    await waitUntil("5 s without a write", () => (performance.now() - lastWrite > 5_000 ? true : undefined), {
      signal,
      timeoutMs: 120_000,
      intervalMs: 250,
    });
  } finally {
    unsubscribe();
  }
}

/** Writes and non-watch reads through `proxy` during the next `ms`. */
export async function window(proxy: CountingProxy, ms: number, signal: AbortSignal) {
  const before = proxy.counts();
  await pause(ms, signal);
  const during = since(proxy.counts(), before);
  return { writes: writesOf(during), reads: readsOf(during) };
}

// ---- summary ----

type Numeric = Exclude<keyof SubjectFigures, "subject" | "round" | "convergeRequests">;

/**
 * BENCH_REQUEST_LOG=DIR keeps every request an operator makes through its proxy (watches aside) in
 * DIR/<subject>-<namespace>.jsonl, a line each as it is answered: `t` (when it came, epoch ms), `ms` (how long the
 * apiserver took, through the proxy), `verb`, `resource`, `namespace`, `name`. For a look at where a run's time went.
 */
const requestLogDir = process.env.BENCH_REQUEST_LOG || undefined;

function keepRequestLog(proxy: CountingProxy, file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  proxy.onAnswer((info, at, ms) => {
    const line = { t: Math.round(performance.timeOrigin + at), ms: Math.round(ms * 10) / 10, ...info };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  });
}

/** The rows of the side-by-side table: label, unit, and the figure each subject has. */
export const rows: readonly { key: Numeric; label: string; unit: string; operatorsOnly?: boolean }[] = [
  { key: "allReadyS", label: "time to all Ready", unit: "s" },
  { key: "writesPerInstance", label: "writes / instance (converge)", unit: "", operatorsOnly: true },
  {
    key: "writesWithoutEventsPerInstance",
    label: "writes / instance without Events (converge)",
    unit: "",
    operatorsOnly: true,
  },
  { key: "readsPerInstance", label: "non-watch reads / instance (converge)", unit: "", operatorsOnly: true },
  { key: "watches", label: "watch requests (converge)", unit: "", operatorsOnly: true },
  { key: "peakRssMiB", label: "peak RSS", unit: "MiB", operatorsOnly: true },
  { key: "convergeCpuS", label: "CPU seconds to converge", unit: "s", operatorsOnly: true },
  { key: "totalCpuS", label: "CPU seconds, whole run", unit: "s", operatorsOnly: true },
  { key: "idleWrites", label: "writes in the idle window", unit: "", operatorsOnly: true },
  { key: "idleReads", label: "reads in the idle window", unit: "", operatorsOnly: true },
  { key: "restartWrites", label: "writes in the window after a restart", unit: "", operatorsOnly: true },
  { key: "restartReads", label: "reads in the window after a restart", unit: "", operatorsOnly: true },
  { key: "newInstanceP50Ms", label: "idle operator sees a new instance, p50", unit: "ms", operatorsOnly: true },
  { key: "newInstanceMaxMs", label: "idle operator sees a new instance, max", unit: "ms", operatorsOnly: true },
  {
    key: "restartChangeMs",
    label: "a change made as the operator restarts → Ready",
    unit: "ms",
    operatorsOnly: true,
  },
  { key: "changeP50Ms", label: "single change → Ready, p50", unit: "ms" },
  { key: "changeP99Ms", label: "single change → Ready, p99", unit: "ms" },
  { key: "rolloutS", label: "rollout of all N (image change)", unit: "s" },
  { key: "rolloutWritesPerInstance", label: "writes / instance (rollout)", unit: "", operatorsOnly: true },
  {
    key: "rolloutWritesWithoutEventsPerInstance",
    label: "writes / instance without Events (rollout)",
    unit: "",
    operatorsOnly: true,
  },
];

/** The median over rounds of `key` for `subject` (NaN when it has none). */
export function medianOf(figures: readonly SubjectFigures[], subject: SubjectName, key: Numeric): number {
  const values = figures
    .filter((f) => f.subject === subject)
    .map((f) => f[key])
    .filter((v): v is number => typeof v === "number" && !Number.isNaN(v));
  // The median of an even count is a mean of two, which binary floating point prints as 15.649999999999999.
  return values.length === 0 ? NaN : round(quantile(values, 0.5), 3);
}

/** TS ÷ Go, 2 decimals; NaN when either is missing, Infinity when Go's is 0 and TS's is not. */
export function ratio(ts: number, go: number): number {
  if (Number.isNaN(ts) || Number.isNaN(go)) return NaN;
  if (go === 0) return ts === 0 ? 1 : Infinity;
  return round(ts / go, 2);
}

function summaryMetrics(figures: readonly SubjectFigures[]): Metric[] {
  const metrics: Metric[] = [];
  for (const row of rows) {
    for (const subject of ["floor", "go", "ts"] as const) {
      if (subject === "floor" && row.operatorsOnly) continue;
      metrics.push({
        id: `${row.key}.${subject}`,
        label: `${row.label} [${subject}]`,
        value: medianOf(figures, subject, row.key),
        unit: row.unit || "count",
      });
    }
    metrics.push({
      id: `${row.key}.ratio`,
      label: `${row.label} [TS ÷ Go]`,
      value: ratio(medianOf(figures, "ts", row.key), medianOf(figures, "go", row.key)),
      unit: "ratio",
    });
  }
  return metrics;
}
