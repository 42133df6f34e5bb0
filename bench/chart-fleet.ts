/**
 * Chart fleets: this operator's chart path (MyAppInstances with `spec.chart`, rendered by helm processes the
 * operator runs) beside the operator-framework Helm operator (bench/support/helm-operator.ts), the tool a user
 * would pick for "a Helm chart as the operator's template". Same packed public chart (podinfo, from the Go
 * module proxy), same values, same cluster, same run; each operator in its own namespace behind its own counting
 * proxy, the order alternating over rounds (ts first in odd rounds, helm-operator first in even ones).
 *
 * Per subject and round:
 *  1. start it; create N instances (10 creates in flight) → all Ready. Ours: the Ready condition at the current
 *     generation and image. The Helm operator's status ignores the workload, so there Ready = `Deployed=True`
 *     with the desired image and chart version in the deployed manifest AND the Deployment's rollout complete;
 *  2. writes and non-watch reads per instance (until 5 s without a write), CPU seconds, 60 s idle;
 *  3. a restart, and one instance changed to a new image as the operator comes back: seconds until it is Ready
 *     there. Both look at every instance again after a start (ours renders each once more, its cache empty);
 *     what is measured is whether the change waits behind that;
 *  4. a rollout of all N to a new image, through the values (ours: spec.image; theirs: spec.image.tag);
 *  5. a chart version change of all N: the same chart packed as version 6.9.3. Ours: every instance's
 *     spec.chart.configMap patched to the new chart's ConfigMap. Theirs: the chart is part of the operator
 *     (watches.yaml), so the operator restarts on the new chart directory, as a new operator image would;
 *  6. the operator stopped, the fleet and namespace removed (support/cleanup.ts).
 * Memory: the peak resident memory of the operator and every process below it (helm renders for ours), each page
 * once (own pages summed, an executable's file pages once: support/process-stats.ts treeResidentBytes), sampled
 * every 200 ms, or the operator's own VmHWM if higher. CPU: utime + stime of the operator plus its
 * waited-for children (cutime + cstime), so helm's CPU counts for ours.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { apiVersion, kind, type MyAppInstanceSpec } from "../api/index.ts";
import type { KubeClient, KubeObject } from "../kube/index.ts";
import { builtHelm } from "../tools/lib/toolchain.ts";
import { quiet, ratio, window } from "./side-by-side.ts";
import type { Benchmark, BenchContext, BenchmarkResult, Metric } from "./support/benchmark.ts";
import { removeFleet, type FleetExtras } from "./support/cleanup.ts";
import { adminClient, createNamespace, ensureCrd } from "./support/cluster.ts";
import {
  readsOf,
  since,
  startCountingProxyThread,
  watchesOf,
  writesOf,
  type Counts,
  type CountingProxy,
} from "./support/counting-proxy.ts";
import { floorFleet, forEachLimit, instanceFleet, Readiness, type Fleet } from "./support/fleet.ts";
import { ensureFleetCapacity } from "./support/fleet-capacity.ts";
import {
  deployedManifest,
  ensurePodinfoAppCrd,
  podinfoAppApiVersion,
  podinfoAppCollection,
  podinfoAppKind,
  podinfoAppType,
  startHelmOperator,
  writeWatches,
  type PodinfoApp,
} from "./support/helm-operator.ts";
import { follow } from "./support/watch.ts";
import { loadAverages, sampleProcessTree, type TreeSampler } from "./support/process-stats.ts";
import { readMemory } from "./support/operator-process.ts";
import { writeFormattedJson } from "./support/side-by-side-report.ts";
import type { RunContext } from "./support/side-by-side-report.ts";
import { insertIntoSection } from "./support/results-section.ts";
import { quantile, round } from "./support/stats.ts";
import { startSubject, type Subject, type SubjectOptions } from "./support/subjects.ts";

export type ChartSubject = "ts" | "helm-operator";
export const chartSubjects: readonly ChartSubject[] = ["ts", "helm-operator"];

export interface ChartFleetScenario {
  readonly instances: number;
  readonly rounds: number;
  /** --concurrency of ours, --max-concurrent-reconciles of theirs. */
  readonly concurrency: number;
  /** Seconds of the idle window. */
  readonly windowSeconds: number;
}

/** The podinfo module whose charts/podinfo both operators run (the chart test/integration/operator-chart uses). */
const podinfoModule = "github.com/stefanprodan/podinfo@v1.8.1-0.20250910200901-e86405a8674e";
const repository = "ghcr.io/stefanprodan/podinfo";
const tags = ["6.9.2", "6.9.1"] as const;
/** The chart as published, then the same chart packed as a new version (only its version labels change). */
const chartVersions = ["6.9.2", "6.9.3"] as const;
const replicas = 1;
const httpPort = 9898;
const createParallelism = 10;
const mib = 1024 * 1024;

/** What "Ready" is keyed by: the image and the chart version an instance is Ready at. */
const token = (tag: string, chartVersion: string) => `${repository}:${tag} chart ${chartVersion}`;

/** The packed chart of each version (its bytes, for ours) and the same chart unpacked (for theirs). */
interface Chart {
  readonly version: string;
  readonly packed: Buffer;
  readonly dir: string;
}

/** The order of round `index` (0-based). */
export function chartRoundOrder(index: number): ChartSubject[] {
  return index % 2 === 0 ? ["ts", "helm-operator"] : ["helm-operator", "ts"];
}

export function chartFleet(name: string, scenario: ChartFleetScenario): Benchmark {
  return {
    name,
    description:
      `chart path (podinfo) vs the operator-framework Helm operator: ${scenario.instances} instances, ` +
      `${scenario.rounds} round(s) (--n, --rounds)`,
    headline: [],
    budgetMs: scenario.rounds * chartSubjects.length * (30 * 60_000 + scenario.instances * 3_000),
    explicitOnly: true,
    run: (context) => runChartFleet(context, scenario),
  };
}

/** One subject's figures in one round. */
export interface ChartFigures {
  readonly subject: ChartSubject;
  readonly round: number;
  readonly loadBefore: number;
  readonly allReadyS: number;
  readonly writesPerInstance: number;
  readonly readsPerInstance: number;
  readonly watches: number;
  readonly convergeCpuS: number;
  readonly idleWrites: number;
  readonly idleReads: number;
  /** Restarted, then one instance changed at once: seconds until it was Ready at the new image. */
  readonly restartChangeS: number;
  readonly imageRolloutS: number;
  readonly imageRolloutWritesPerInstance: number;
  readonly chartRolloutS: number;
  readonly chartRolloutWritesPerInstance: number;
  readonly totalCpuS: number;
  readonly peakRssMiB: number;
  /** The operator process alone (VmHWM), without its helm children. */
  readonly processPeakRssMiB: number;
  readonly convergeRequests: Counts;
}

async function runChartFleet(context: BenchContext, scenario: ChartFleetScenario): Promise<BenchmarkResult> {
  const { client, signal, log } = context;
  const kubeconfig = process.env.KUBECONFIG ?? "";
  const work = mkdtempSync(path.join(tmpdir(), "myapp-bench-charts-"));
  const apps = adminClient({ resources: [podinfoAppType] });
  try {
    const charts = packCharts(work);
    log(`charts: ${charts.map((c) => `podinfo ${c.version} (${c.packed.length} bytes)`).join(", ")}`);
    await ensureCrd(client, signal);
    await ensurePodinfoAppCrd(client, apps, signal);
    await ensureFleetCapacity(client, { services: scenario.instances, pods: scenario.instances }, signal, log);
    const figures: ChartFigures[] = [];
    for (let index = 0; index < scenario.rounds; index++) {
      for (const subject of chartRoundOrder(index)) {
        const say = (message: string) => log(`round ${index + 1}/${scenario.rounds} ${subject}: ${message}`);
        const run = { client, apps, kubeconfig, charts, scenario, work, signal, log: say };
        figures.push(await runSubject(run, subject, index + 1));
        say(`done: ${JSON.stringify({ ...figures.at(-1), convergeRequests: undefined })}`);
      }
    }
    return {
      parameters: {
        ...scenario,
        chart: `podinfo ${chartVersions.join(" → ")}`,
        images: tags.join(" → "),
        operator: process.env.BENCH_TS_BUNDLE ? `bundle ${process.env.BENCH_TS_BUNDLE}` : "bundle of the work tree",
      },
      metrics: summaryMetrics(figures),
      details: { rounds: figures },
    };
  } finally {
    await apps.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** podinfo's chart from the Go module cache, packed by the toolchain's helm as both versions, and unpacked. */
function packCharts(work: string): Chart[] {
  const helm = builtHelm();
  if (!helm) throw new Error("the toolchain's helm is not built: run `npm run toolchain` first");
  const download = execFileSync("go", ["mod", "download", "-json", podinfoModule], {
    encoding: "utf8",
    env: { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod" },
  });
  const moduleDir = (JSON.parse(download) as { Dir?: string }).Dir;
  if (!moduleDir) throw new Error(`go mod download ${podinfoModule}: no directory`);
  // helm with an empty home of its own: no repositories or registries of the machine's user.
  const helmHome = path.join(work, "helm-home");
  const env = { PATH: process.env.PATH ?? "", HOME: helmHome, HELM_CACHE_HOME: path.join(helmHome, "cache") };
  return chartVersions.map((version) => {
    const out = path.join(work, `chart-${version}`);
    mkdirSync(out, { recursive: true });
    const args = ["package", path.join(moduleDir, "charts/podinfo"), "--destination", out, "--version", version];
    execFileSync(helm, args, { env, stdio: ["ignore", "ignore", "inherit"] });
    const tgz = path.join(out, readdirSync(out).find((file) => file.endsWith(".tgz")) ?? "");
    execFileSync("tar", ["-xzf", tgz, "-C", out]); // the same bytes, unpacked: charts/podinfo → out/podinfo
    return { version, packed: readFileSync(tgz), dir: path.join(out, "podinfo") };
  });
}

interface SubjectRun {
  readonly client: KubeClient;
  /** The admin client, knowing PodinfoApps too. */
  readonly apps: KubeClient;
  readonly kubeconfig: string;
  readonly charts: readonly Chart[];
  readonly scenario: ChartFleetScenario;
  readonly work: string;
  readonly signal: AbortSignal;
  log(message: string): void;
}

/** What differs between the two subjects: how they start, what an instance is, what Ready is. */
interface ChartSide {
  /** Starts the operator on chart `chart` (for theirs: the chart of its watches.yaml). */
  start(chart: Chart): Promise<Subject>;
  /** Starts following what Ready is made of; resolves when `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
  create(name: string): Promise<void>;
  setTag(name: string, tag: string): Promise<void>;
  /** Moves all N to `chart`; theirs restarts the operator, returned by `restart`. */
  moveToChart(names: readonly string[], chart: Chart, restart: () => Promise<void>): Promise<void>;
  /** Resolves at the moment all N are Ready at `tag` on chart `version` (performance.now()). */
  allReady(what: string, tag: string, version: string, progress: () => void): Promise<number>;
  /** Resolves at the moment instance `name` is Ready at `tag` on chart `version` (performance.now()). */
  oneReady(what: string, name: string, tag: string, version: string): Promise<number>;
  readonly extras: FleetExtras;
}

const timeoutFor = (n: number) => 10 * 60_000 + n * 2_000;

/** Ours: MyAppInstances whose spec.chart names the packed chart in a ConfigMap of the namespace. */
async function oursSide(run: SubjectRun, namespace: string, options: SubjectOptions): Promise<ChartSide> {
  const { client, charts, scenario, signal } = run;
  const configMapOf = (chart: Chart) => `podinfo-chart-${chart.version}`;
  for (const chart of charts) {
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: configMapOf(chart), namespace },
      binaryData: { "chart.tgz": chart.packed.toString("base64") },
    } as KubeObject);
  }
  const helm = builtHelm()!;
  const instances = instanceFleet(client, namespace, {
    replicas,
    image: `${repository}:${tags[0]}`,
    storage: undefined,
  });
  const readiness = new Readiness({
    ...instances,
    readyImage(object) {
      const image = instances.readyImage(object);
      const configMap = (object as KubeObject & { spec: MyAppInstanceSpec }).spec.chart?.configMap ?? "";
      return image && `${image} chart ${configMap.replace("podinfo-chart-", "")}`;
    },
  });
  const chartSpec = (chart: Chart) => ({
    configMap: configMapOf(chart),
    valuePaths: {
      replicas: "replicaCount",
      imageRepository: "image.repository",
      imageTag: "image.tag",
      port: "service.httpPort",
    },
  });
  return {
    start: () => startSubject("ts", { ...options, args: [`--helm=${helm}`] }),
    async follow(stop) {
      const start = await client.list(apiVersion, kind, { namespace, limit: 1 });
      await readiness.follow(client, namespace, start.metadata?.resourceVersion ?? "0", stop);
    },
    async create(name) {
      await client.create({
        apiVersion,
        kind,
        metadata: { name, namespace },
        spec: {
          replicas,
          image: `${repository}:${tags[0]}`,
          port: httpPort,
          chart: chartSpec(charts[0]!),
          // podinfo's pods set no security context: they meet Pod Security "baseline", not "restricted".
          podSecurityLevel: "Baseline",
        },
      });
    },
    setTag: (name, tag) => instances.setImage(name, `${repository}:${tag}`),
    async moveToChart(names, chart) {
      await forEachLimit(
        names,
        createParallelism,
        async (name) => {
          await client.mergePatch(apiVersion, kind, name, namespace, { spec: { chart: chartSpec(chart) } });
        },
        signal,
      );
    },
    allReady: (what, tag, version, progress) =>
      readiness.until(what, () => readiness.count(token(tag, version)) >= scenario.instances, {
        signal,
        timeoutMs: timeoutFor(scenario.instances),
        progress,
      }),
    oneReady: (what, name, tag, version) =>
      readiness.until(what, () => readiness.isReadyAt(name, token(tag, version)), {
        signal,
        timeoutMs: timeoutFor(scenario.instances),
      }),
    extras: {},
  };
}

/** The image and chart version of a PodinfoApp's deployed release, once Deployed (podinfo's own labels). */
export function deployedToken(app: PodinfoApp): string | undefined {
  const manifest = deployedManifest(app);
  if (!manifest) return undefined;
  const image = /^\s*image: "?([^"\s]+)"?\s*$/m.exec(manifest)?.[1];
  const chart = /helm\.sh\/chart: podinfo-(\S+)/.exec(manifest)?.[1];
  const wanted = app.spec?.image as { repository?: string; tag?: string } | undefined;
  if (!image || !chart || image !== `${wanted?.repository}:${wanted?.tag}`) return undefined;
  return `${image} chart ${chart}`;
}

/**
 * Theirs: PodinfoApps whose spec is the chart's values, reconciled by `helm-operator run` on watches.yaml; Ready
 * = the release deployed at the wanted image and chart AND its Deployment rolled out (podinfo's fullname is the
 * release name + "-podinfo").
 */
function theirsSide(run: SubjectRun, namespace: string, options: SubjectOptions): ChartSide {
  const { client, apps, scenario, signal, work } = run;
  const releases = new Readiness({
    watched: { apiVersion: podinfoAppApiVersion, kind: podinfoAppKind },
    readyImage: (object) => deployedToken(object as PodinfoApp),
    create: () => Promise.reject(new Error("not used")),
    setImage: () => Promise.reject(new Error("not used")),
  });
  // Only its watched kind and rollout test are used: a Deployment Ready at its image, whoever made it.
  const workloads: Fleet = floorFleet(client, namespace, {
    replicas,
    image: `${repository}:${tags[0]}`,
    storage: undefined,
  });
  const rollouts = new Readiness(workloads);
  const values = (tag: string) => ({ replicaCount: replicas, image: { repository, tag }, service: { httpPort } });
  return {
    start: (chart) => startHelmOperator(writeWatches(mkdtempSync(path.join(work, "watches-")), chart.dir), options),
    async follow(stop) {
      const fromApps = (await apps.list(podinfoAppApiVersion, podinfoAppKind, { namespace })).metadata?.resourceVersion;
      const fromWorkloads = await client.list("apps/v1", "Deployment", { namespace, limit: 1 });
      await Promise.all([
        follow<PodinfoApp>(
          apps,
          podinfoAppApiVersion,
          podinfoAppKind,
          { namespace, resourceVersion: fromApps ?? "0", signal: stop },
          (event) => releases.observe(event),
        ),
        rollouts.follow(client, namespace, fromWorkloads.metadata?.resourceVersion ?? "0", stop),
      ]);
    },
    async create(name) {
      await apps.create<PodinfoApp>({
        apiVersion: podinfoAppApiVersion,
        kind: podinfoAppKind,
        metadata: { name, namespace },
        spec: values(tags[0]),
      });
    },
    async setTag(name, tag) {
      await apps.mergePatch(podinfoAppApiVersion, podinfoAppKind, name, namespace, { spec: { image: { tag } } });
    },
    async moveToChart(_names, _chart, restart) {
      await restart();
    },
    async allReady(what, tag, version, progress) {
      const n = scenario.instances;
      const waiting = { signal, timeoutMs: timeoutFor(n), progress };
      // Each resolves at the event that made it true, or at once if it already was: the later of the two is when
      // both held.
      const deployed = await releases.until(
        `${what}: releases`,
        () => releases.count(token(tag, version)) >= n,
        waiting,
      );
      const rolledOut = await rollouts.until(
        `${what}: Deployments`,
        () => rollouts.count(`${repository}:${tag}`) >= n,
        waiting,
      );
      return Math.max(deployed, rolledOut);
    },
    async oneReady(what, name, tag, version) {
      const waiting = { signal, timeoutMs: timeoutFor(scenario.instances) };
      const deployed = await releases.until(
        `${what}: release`,
        () => releases.isReadyAt(name, token(tag, version)),
        waiting,
      );
      // podinfo's fullname: the release name + "-podinfo".
      const rolledOut = await rollouts.until(
        `${what}: Deployment`,
        () => rollouts.isReadyAt(`${name}-podinfo`, `${repository}:${tag}`),
        waiting,
      );
      return Math.max(deployed, rolledOut);
    },
    extras: {
      // The operator is stopped: its uninstall finalizer would hold every PodinfoApp, and the namespace.
      async release() {
        const { items } = await apps.list<PodinfoApp>(podinfoAppApiVersion, podinfoAppKind, { namespace });
        const held = items.filter((item) => (item.metadata.finalizers ?? []).length > 0);
        const drop = async (app: PodinfoApp) => {
          await apps
            .mergePatch(podinfoAppApiVersion, podinfoAppKind, app.metadata.name ?? "", namespace, {
              metadata: { finalizers: null },
            })
            .catch(() => undefined); // already gone
        };
        await forEachLimit(held, createParallelism, drop, new AbortController().signal);
      },
      first: [podinfoAppCollection],
      last: ["/api/v1/namespaces/NS/secrets"], // the releases' Secrets (one per revision)
    },
  };
}

/** One subject's share of a round, in its own namespace, cleaned up whatever happens. */
async function runSubject(run: SubjectRun, subject: ChartSubject, roundNumber: number): Promise<ChartFigures> {
  const { client, kubeconfig, charts, scenario, signal, log } = run;
  const n = scenario.instances;
  const namespace = await createNamespace(client, `bench-chart-${subject === "ts" ? "ts" : "helmop"}`);
  const loadBefore = round(loadAverages()[0], 2);
  log(`namespace ${namespace}, load ${loadBefore}`);
  // The watches end with the subject, or with the budget.
  const watchStop = new AbortController();
  const watching = AbortSignal.any([signal, watchStop.signal]);
  let proxy: CountingProxy | undefined;
  let extras: FleetExtras = {};
  const processes: { subject: Subject; tree: TreeSampler; peakRss: number }[] = [];
  const stopProcess = async (entry: (typeof processes)[number]) => {
    entry.tree.stop();
    entry.peakRss = readMemory(entry.subject.pid)?.peakRss ?? entry.peakRss;
    await entry.subject.stop();
  };
  try {
    proxy = await startCountingProxyThread(kubeconfig, subject);
    const options: SubjectOptions = {
      kubeconfig: proxy.kubeconfig,
      namespace,
      concurrency: scenario.concurrency,
      readyTimeoutMs: 30_000 + n * 10,
      signal,
    };
    const side = subject === "ts" ? await oursSide(run, namespace, options) : theirsSide(run, namespace, options);
    extras = side.extras;
    const start = async (chart: Chart) => {
      const started = await side.start(chart);
      processes.push({ subject: started, tree: sampleProcessTree(started.pid), peakRss: 0 });
      log(`${subject} pid ${started.pid} ready on chart ${chart.version}`);
    };
    const cpu = () => processes.reduce((sum, p) => sum + p.tree.cpuSeconds(), 0);
    await start(charts[0]!);
    const following = side.follow(watching).catch((error: unknown) => log(`watch failed: ${String(error)}`));
    const names = Array.from({ length: n }, (_, i) => `app-${String(i).padStart(5, "0")}`);
    const requests = () => `, ${writesOf(proxy!.counts())} writes, ${readsOf(proxy!.counts())} reads`;
    let done = 0;
    const each = (task: (name: string) => Promise<void>) =>
      forEachLimit(
        names,
        createParallelism,
        async (name) => {
          await task(name);
          done++;
        },
        signal,
      );

    // 1. create N → all Ready
    const cpuAtStart = cpu();
    const createdAt = performance.now();
    const [, readyAt] = await Promise.all([
      each((name) => side.create(name)),
      side.allReady(`all ${n} Ready`, tags[0], charts[0]!.version, () =>
        log(`converging: ${done}/${n} created${requests()}`),
      ),
    ]);
    const allReadyS = round((readyAt - createdAt) / 1000, 1);
    log(`all ${n} Ready in ${allReadyS} s${requests()}`);
    await quiet(proxy, signal);
    const convergeRequests = proxy.counts();
    const converge = {
      writesPerInstance: round(writesOf(convergeRequests) / n, 2),
      readsPerInstance: round(readsOf(convergeRequests) / n, 2),
      watches: watchesOf(convergeRequests),
      convergeCpuS: round(cpu() - cpuAtStart, 1),
    };
    log(`converged: ${JSON.stringify(converge)}`);

    // 2. idle
    const idle = await window(proxy, scenario.windowSeconds * 1000, signal);
    log(`${scenario.windowSeconds} s idle: ${idle.writes} writes, ${idle.reads} reads`);

    // 3. a restart, and one instance changed as the operator comes back (and looks at every instance again)
    await stopProcess(processes.at(-1)!);
    await start(charts[0]!);
    const changed = names[Math.floor(n / 2)]!;
    const changeFrom = performance.now();
    await side.setTag(changed, tags[1]);
    const changeAt = await side.oneReady(`${changed} at ${tags[1]}`, changed, tags[1], charts[0]!.version);
    const restartChangeS = round((changeAt - changeFrom) / 1000, 2);
    log(`restarted; a change made as it came back was Ready in ${restartChangeS} s`);
    await quiet(proxy, signal);

    // 4. every instance to a new image through the values
    const beforeImage = proxy.counts();
    done = 0;
    const imageFrom = performance.now();
    const [, imageAt] = await Promise.all([
      each((name) => side.setTag(name, tags[1])),
      side.allReady(`all ${n} at ${tags[1]}`, tags[1], charts[0]!.version, () =>
        log(`image rollout: ${done}/${n} changed${requests()}`),
      ),
    ]);
    const imageRolloutS = round((imageAt - imageFrom) / 1000, 1);
    await quiet(proxy, signal);
    const imageWrites = writesOf(since(proxy.counts(), beforeImage));
    log(`image rollout of all ${n} in ${imageRolloutS} s, ${imageWrites} writes`);

    // 5. every instance to the new chart version
    const beforeChart = proxy.counts();
    const chartFrom = performance.now();
    const restart = async () => {
      await stopProcess(processes.at(-1)!);
      await start(charts[1]!);
    };
    const [, chartAt] = await Promise.all([
      side.moveToChart(names, charts[1]!, restart),
      side.allReady(`all ${n} on chart ${charts[1]!.version}`, tags[1], charts[1]!.version, () =>
        log(`chart rollout${requests()}`),
      ),
    ]);
    const chartRolloutS = round((chartAt - chartFrom) / 1000, 1);
    await quiet(proxy, signal);
    const chartWrites = writesOf(since(proxy.counts(), beforeChart));
    log(`chart rollout of all ${n} in ${chartRolloutS} s, ${chartWrites} writes`);

    watchStop.abort();
    await following;
    for (const p of processes) await stopProcess(p);
    const peak = Math.max(...processes.map((p) => Math.max(p.tree.peakBytes(), p.peakRss)));
    return {
      subject,
      round: roundNumber,
      loadBefore,
      allReadyS,
      ...converge,
      idleWrites: idle.writes,
      idleReads: idle.reads,
      restartChangeS,
      imageRolloutS,
      // The instance changed after the restart is at the new image already: its patch is a no-op.
      imageRolloutWritesPerInstance: round(imageWrites / Math.max(1, n - 1), 2),
      chartRolloutS,
      chartRolloutWritesPerInstance: round(chartWrites / n, 2),
      totalCpuS: round(cpu(), 1),
      peakRssMiB: round(peak / mib, 0),
      processPeakRssMiB: round(Math.max(...processes.map((p) => p.peakRss)) / mib, 0),
      convergeRequests,
    };
  } catch (error) {
    const last = processes.at(-1);
    if (last) log(`${subject}'s last lines:\n${last.subject.tail()}`);
    throw error;
  } finally {
    watchStop.abort();
    for (const p of processes) await stopProcess(p);
    await proxy?.close();
    await removeFleet(client, kubeconfig, namespace, new AbortController().signal, log, extras).catch(
      (error: unknown) => log(`cleanup of ${namespace} failed: ${String(error)}`),
    );
  }
}

// ---- summary ----

type Numeric = Exclude<keyof ChartFigures, "subject" | "round" | "convergeRequests">;

/** The rows of the table: label and unit of each figure. */
export const chartRows: readonly { key: Numeric; label: string; unit: string }[] = [
  { key: "allReadyS", label: "create N → all Ready", unit: "s" },
  { key: "writesPerInstance", label: "writes / instance (converge)", unit: "" },
  { key: "readsPerInstance", label: "non-watch reads / instance (converge)", unit: "" },
  { key: "watches", label: "watch requests (converge)", unit: "" },
  { key: "peakRssMiB", label: "peak RSS, operator + its helm processes", unit: "MiB" },
  { key: "processPeakRssMiB", label: "peak RSS, operator process alone (VmHWM)", unit: "MiB" },
  { key: "convergeCpuS", label: "CPU seconds to converge (with helm children)", unit: "s" },
  { key: "totalCpuS", label: "CPU seconds, whole run (with helm children)", unit: "s" },
  { key: "idleWrites", label: "writes in the idle window", unit: "" },
  { key: "idleReads", label: "reads in the idle window", unit: "" },
  { key: "restartChangeS", label: "a change made as the operator restarts → Ready", unit: "s" },
  { key: "imageRolloutS", label: "rollout of all N, image change", unit: "s" },
  { key: "imageRolloutWritesPerInstance", label: "writes / instance (image rollout)", unit: "" },
  { key: "chartRolloutS", label: "rollout of all N, chart version change", unit: "s" },
  { key: "chartRolloutWritesPerInstance", label: "writes / instance (chart rollout)", unit: "" },
];

/** The median over rounds of `key` for `subject` (NaN when it has none). */
export function chartMedian(figures: readonly ChartFigures[], subject: ChartSubject, key: Numeric): number {
  return round(
    quantile(
      figures.filter((f) => f.subject === subject).map((f) => f[key]),
      0.5,
    ),
    2,
  );
}

function summaryMetrics(figures: readonly ChartFigures[]): Metric[] {
  return chartRows.flatMap((row) => {
    const ts = chartMedian(figures, "ts", row.key);
    const theirs = chartMedian(figures, "helm-operator", row.key);
    const unit = row.unit || "count";
    return [
      { id: `${row.key}.ts`, label: `${row.label} [ts]`, value: ts, unit },
      { id: `${row.key}.helm-operator`, label: `${row.label} [helm-operator]`, value: theirs, unit },
      { id: `${row.key}.ratio`, label: `${row.label} [ts ÷ helm-operator]`, value: ratio(ts, theirs), unit: "ratio" },
    ];
  });
}

const sectionEnd = "<!-- chart fleet runs end: new runs are inserted above this line -->";
const sectionIntro = `## Chart fleets: the chart path vs the operator-framework Helm operator

\`npm run bench -- chart-fleet --n 100\` (see README.md): the same packed podinfo chart with the same values, this
operator's chart path (MyAppInstances with \`spec.chart\`) beside \`helm-operator run\` of helm-operator-plugins
(PodinfoApps, watches.yaml on the unpacked chart), same run, interleaved, each behind its own counting proxy. Ready
for the Helm operator = release deployed at the wanted image and chart AND the Deployment rolled out (its status
ignores the workload). Peak RSS counts the helm processes ours runs (the process tree's resident pages, helm's
shared text once, sampled every 200 ms). Medians over rounds; "÷" below 1: ours is better.
`;

/** The markdown table of one run. */
export function renderChartFleet(name: string, result: BenchmarkResult, run: RunContext): string {
  const figures = (result.details?.rounds ?? []) as ChartFigures[];
  const p = result.parameters;
  const loads = figures.map((f) => f.loadBefore);
  const cell = (value: number) => (Number.isNaN(value) ? "—" : String(value));
  const lines = [
    `### ${run.date.slice(0, 16).replace("T", " ")} UTC · ${name}: N=${p.instances}, ${p.rounds} round(s), ` +
      `concurrency ${p.concurrency}, idle window ${p.windowSeconds} s, ${p.chart}, images ${p.images}`,
    "",
    `\`npm run bench -- chart-fleet --n ${p.instances} --rounds ${p.rounds}\`; operator: ${p.operator}`,
    "",
    `commit ${run.commit}; ${run.machine.cores} cores, ${run.machine.memoryGiB} GiB, kube ${run.machine.kubernetes}; ` +
      `load ${loads.length ? `${Math.min(...loads)}–${Math.max(...loads)}` : "?"}`,
    "",
    "| metric | helm-operator | TS operator (chart path) | TS ÷ helm-operator |",
    "| --- | --- | --- | --- |",
  ];
  for (const row of chartRows) {
    const ts = chartMedian(figures, "ts", row.key);
    const theirs = chartMedian(figures, "helm-operator", row.key);
    const unit = row.unit ? ` (${row.unit})` : "";
    lines.push(`| ${row.label}${unit} | ${cell(theirs)} | ${cell(ts)} | ${cell(ratio(ts, theirs))} |`);
  }
  return lines.join("\n");
}

/** Inserts the table into RESULTS.md's chart fleet section and writes results/chart-fleet-n<N>.json. */
export async function recordChartFleet(
  benchDir: string,
  name: string,
  result: BenchmarkResult,
  run: RunContext,
  table: string,
): Promise<string[]> {
  const results = path.join(benchDir, "RESULTS.md");
  insertIntoSection(results, { end: sectionEnd, intro: sectionIntro }, table, false);
  const file = path.join(benchDir, "results", `chart-fleet-n${String(result.parameters.instances)}.json`);
  return [results, await writeFormattedJson(file, { benchmark: name, ...run, ...result })];
}
