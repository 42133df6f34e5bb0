/**
 * Runs the benchmarks against the local cluster, prints a summary table, and records the run: every figure in
 * bench/results/latest.json, one headline row appended to bench/RESULTS.md; a side-by-side run also gets its own
 * table in RESULTS.md and results/side-by-side-n<N>[-storage].json.
 *
 *   npm run bench                                  all of them but the explicit-only ones (10,000 instances)
 *   npm run bench -- informer-latency              only the named ones
 *   npm run bench -- side-by-side --n 500 --storage 1Gi --rounds 2    a side-by-side run of your own
 *   npm run bench -- chart-fleet --n 100           the chart path beside the operator-framework Helm operator
 *   npm run bench -- --no-record                   measure and print, record nothing (trying things out)
 *
 * Needs the local cluster (`npm run cluster -- up`); KUBECONFIG defaults to its .local/kubeconfig. Each benchmark has a time
 * budget; when it passes, or on Ctrl-C, the benchmark stops waiting and cleans up what it started.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { parseArgs } from "node:util";
import { myAppInstanceSpecSchema, specRules } from "../api/index.ts";
import { admission } from "./admission.ts";
import { chartFleet, recordChartFleet, renderChartFleet } from "./chart-fleet.ts";
import { hostileInput } from "./hostile-input.ts";
import { informerLatency } from "./informer-latency.ts";
import { operatorThroughput } from "./operator-throughput.ts";
import { pulumiPreview } from "./pulumi-preview.ts";
import { pulumiProject } from "./pulumi-project.ts";
import { pulumiUp } from "./pulumi-up.ts";
import { allSubjects, sideBySide, type Scenario, type SubjectName } from "./side-by-side.ts";
import type { Benchmark, Metric } from "./support/benchmark.ts";
import { adminClient } from "./support/cluster.ts";
import {
  appendResultsRow,
  describeCommit,
  describeMachine,
  writeLatest,
  type BenchmarkRecord,
  type RunRecord,
} from "./support/record.ts";
import { recordSideBySide, renderSideBySide, writeSideBySideJson } from "./support/side-by-side-report.ts";
import { integerSetting } from "./support/settings.ts";
import { kubeconfigPath } from "../tools/lib/paths.ts";

/** The side-by-side scenarios (1,000 instances; 200 with storage; 10,000 on request), and `side-by-side` for one given by flags. */
function sideBySideBenchmarks(flags: BenchFlags, concurrency: number): Benchmark[] {
  const base = (instances: number, storage: string | undefined): Scenario => ({
    instances,
    storage,
    rounds: positive("rounds", flags.rounds, 1),
    changes: positive("changes", flags.changes, 20),
    windowSeconds: positive("window", flags.window, 60),
    newInstances: 5,
    concurrency,
    rollout: !flags["no-rollout"],
    subjects: subjectList(flags.subjects),
  });
  const custom = base(positive("n", flags.n, 100), storageQuantity(flags.storage));
  return [
    sideBySide("side-by-side-1000", base(1000, undefined)),
    sideBySide("side-by-side-200-storage", base(200, "1Gi")),
    { ...sideBySide("side-by-side-10000", base(10_000, undefined)), explicitOnly: true },
    {
      ...sideBySide("side-by-side", custom, "TS vs Go peer vs floor, as given by --n (100), --storage, --rounds, ..."),
      explicitOnly: true,
    },
  ];
}

/** The flags that shape a benchmark (beside --no-record and --help, which every run takes). */
const benchmarkFlags = ["n", "storage", "rounds", "changes", "window", "no-rollout", "subjects"] as const;

type BenchFlags = { readonly [F in (typeof benchmarkFlags)[number]]?: F extends "no-rollout" ? boolean : string };

/** The flags a benchmark reads: every side-by-side run its scenario's, the custom one --n and --storage too. */
export function flagsOf(name: string): readonly string[] {
  const scenario = ["rounds", "changes", "window", "no-rollout", "subjects"];
  if (name === "side-by-side") return ["n", "storage", ...scenario];
  if (name.startsWith("side-by-side-")) return scenario;
  if (name === "chart-fleet") return ["n", "rounds", "window"];
  return [];
}

/** Every benchmark, shaped by `flags` (a bad value throws, naming its flag). */
function allBenchmarks(flags: BenchFlags, concurrency: number): readonly Benchmark[] {
  return [
    operatorThroughput,
    informerLatency,
    pulumiPreview,
    pulumiUp,
    pulumiProject,
    admission,
    hostileInput,
    ...sideBySideBenchmarks(flags, concurrency),
    chartFleet("chart-fleet", {
      instances: positive("n", flags.n, 100),
      rounds: positive("rounds", flags.rounds, 1),
      concurrency,
      windowSeconds: positive("window", flags.window, 60),
    }),
  ];
}

/** A flag's positive integer (decimal digits), or `fallback` when it is not given. */
function positive(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(parsed >= 1 && parsed <= Number.MAX_SAFE_INTEGER))
    throw new Error(`--${flag} must be a positive integer, got "${value}"`);
  return parsed;
}

/** The schema of an instance's spec.storage: what --storage gives every instance of the run. */
const storageSchema = myAppInstanceSpecSchema.shape.storage.unwrap();

/**
 * `--storage`: a spec.storage quantity, checked before anything starts (the instances would refuse a bad one only
 * after the operators are up). Empty is refused too: it would run without storage, recorded as a run with it.
 */
function storageQuantity(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!storageSchema.safeParse(value).success) {
    throw new Error(`--storage ${specRules.storage}, got "${value}" (leave --storage out for no volumes)`);
  }
  return value;
}

/** `--subjects floor,go,ts` (any of them, in any order; the run keeps its alternating order). */
function subjectList(value: string | undefined): SubjectName[] | undefined {
  if (value === undefined) return undefined;
  const names = value.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !allSubjects.includes(name as SubjectName));
  if (unknown.length > 0 || names.length === 0)
    throw new Error(`--subjects takes a comma-separated list of ${allSubjects.join(", ")}; got "${value}"`);
  return names as SubjectName[];
}

const benchDir = path.dirname(fileURLToPath(import.meta.url));

/** The concurrency of the operators a benchmark starts (BENCH_CONCURRENCY). */
const defaultConcurrency = 2;

/** What the command line asks for: these benchmarks, or print this and exit with this code. */
export type BenchCommandLine =
  | {
      readonly run: {
        readonly benchmarks: readonly Benchmark[];
        readonly selected: readonly Benchmark[];
        readonly record: boolean;
      };
    }
  | { readonly exit: number; readonly stdout?: string; readonly stderr?: string };

/**
 * `npm run bench`'s arguments, without side effects: `--help` → the usage (exit 0); an unknown flag or benchmark, a
 * bad value, or a flag none of the chosen benchmarks reads → one line and the usage (exit 2), never a stack trace.
 */
export function benchCommandLine(argv: readonly string[]): BenchCommandLine {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        "no-record": { type: "boolean" },
        help: { type: "boolean", short: "h" },
        n: { type: "string" },
        storage: { type: "string" },
        rounds: { type: "string" },
        changes: { type: "string" },
        window: { type: "string" },
        "no-rollout": { type: "boolean" },
        subjects: { type: "string" },
      },
    });
    if (values.help) return { exit: 0, stdout: usage() };
    const benchmarks = allBenchmarks(values, integerSetting("BENCH_CONCURRENCY", defaultConcurrency));
    const unknown = positionals.filter((name) => !benchmarks.some((b) => b.name === name));
    if (unknown.length > 0) {
      throw new Error(
        `unknown benchmark(s) ${unknown.join(", ")}; there are: ${benchmarks.map((b) => b.name).join(", ")}`,
      );
    }
    const selected =
      positionals.length > 0
        ? benchmarks.filter((b) => positionals.includes(b.name))
        : benchmarks.filter((b) => !b.explicitOnly);
    // A flag no chosen benchmark reads would be dropped without a word (--storage for chart-fleet, --n for all).
    const unused = benchmarkFlags.filter(
      (flag) => values[flag] !== undefined && !selected.some((b) => flagsOf(b.name).includes(flag)),
    );
    if (unused.length > 0) {
      const takes = (b: Benchmark) =>
        flagsOf(b.name)
          .map((flag) => `--${flag}`)
          .join(", ") || "no flags of its own";
      throw new Error(
        `${unused.map((flag) => `--${flag}`).join(", ")} ${unused.length === 1 ? "does" : "do"} not apply to ` +
          `${selected.map((b) => `${b.name} (${takes(b)})`).join(", ")}`,
      );
    }
    return { run: { benchmarks, selected, record: !values["no-record"] } };
  } catch (error) {
    return { exit: 2, stderr: `bench: ${problem(error)}\n${usage()}` };
  }
}

function usage(): string {
  const benchmarks = allBenchmarks({}, defaultConcurrency);
  return [
    `Usage: npm run bench -- [--no-record] [${benchmarks.map((b) => b.name).join("|")} ...]`,
    "       side-by-side options: --n N --storage QUANTITY --rounds R --changes C --window SECONDS --no-rollout",
    "                               --subjects floor,go,ts (side-by-side-*: all of them but --n and --storage)",
    "       chart-fleet options:  --n N (100) --rounds R (1) --window SECONDS (60)",
    ...benchmarks.map((b) => `  ${b.name.padEnd(26)} ${b.description}${b.explicitOnly ? " (only when named)" : ""}`),
  ].join("\n");
}

/** An error in one clause: parseArgs's "To specify a positional argument ..." advice does not apply here. */
function problem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const flag = /^Unknown option '([^']+)'/.exec(message)?.[1];
  return flag ? `unknown flag ${flag}` : message;
}

async function main(): Promise<number> {
  // The local cluster of `npm run cluster -- up`, as `npm run kubectl` and `npm test` use it, unless KUBECONFIG
  // names another (set here, so the benchmarks' kubectl and pulumi children see the same).
  if (!process.env.KUBECONFIG && existsSync(kubeconfigPath)) process.env.KUBECONFIG = kubeconfigPath;
  const command = benchCommandLine(process.argv.slice(2));
  if ("exit" in command) {
    if (command.stdout !== undefined) console.log(command.stdout);
    if (command.stderr !== undefined) console.error(command.stderr);
    return command.exit;
  }
  const { benchmarks, selected } = command.run;

  const client = adminClient();
  const machine = await describeMachine(client);
  const date = new Date().toISOString();
  const interrupted = new AbortController();
  let current: AbortController | undefined;
  // SIGTERM (a CI runner's or `kill`'s stop) cleans up as Ctrl-C does: by default it would end this process and
  // leave the operators it started running.
  const interrupt = (signal: NodeJS.Signals) => {
    if (interrupted.signal.aborted) process.exit(130); // second Ctrl-C: leave now (operators are killed on exit)
    process.stderr.write(`\n${signal}: cleaning up (Ctrl-C again to leave at once)\n`);
    interrupted.abort();
    current?.abort();
  };
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);

  const records: Record<string, BenchmarkRecord> = {};
  for (const benchmark of selected) {
    if (interrupted.signal.aborted) break;
    current = new AbortController();
    const budget = setTimeout(() => current?.abort(), benchmark.budgetMs);
    const startedAt = performance.now();
    const log = (message: string) => {
      const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
      process.stderr.write(`[${benchmark.name} ${seconds}s] ${message}\n`);
    };
    log(benchmark.description);
    try {
      const result = await benchmark.run({ client, signal: current.signal, log });
      records[benchmark.name] = { status: "ok", durationMs: Math.round(performance.now() - startedAt), ...result };
      log("done");
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      records[benchmark.name] = {
        status: "failed",
        durationMs: Math.round(performance.now() - startedAt),
        error: message,
      };
      log(`FAILED: ${message}`);
    } finally {
      clearTimeout(budget);
    }
  }

  const run: RunRecord = { date, commit: describeCommit(benchDir), machine, benchmarks: records };
  console.log(summary(run));
  const record = command.run.record && !interrupted.signal.aborted;
  const written: string[] = [];
  for (const benchmark of selected.filter((b) => b.name.startsWith("side-by-side"))) {
    const result = records[benchmark.name];
    if (result?.status !== "ok") continue;
    const table = renderSideBySide(benchmark.name, result, run);
    console.log(`\n${table}`);
    if (record)
      written.push(await writeSideBySideJson(benchDir, benchmark.name, result, run), recordSideBySide(benchDir, table));
  }
  const charts = records["chart-fleet"];
  if (charts?.status === "ok") {
    const table = renderChartFleet("chart-fleet", charts, run);
    console.log(`\n${table}`);
    if (record) written.push(...(await recordChartFleet(benchDir, "chart-fleet", charts, run, table)));
  }
  if (record) {
    written.push(await writeLatest(benchDir, run));
    // The headline table has columns for the short benchmarks only; a side-by-side-only run adds no row there.
    if (selected.some((b) => b.headline.length > 0)) written.push(appendResultsRow(benchDir, benchmarks, run));
    console.log(`\nrecorded: ${[...new Set(written)].map((f) => path.relative(process.cwd(), f)).join(", ")}`);
  }
  return Object.values(records).some((r) => r.status === "failed") || interrupted.signal.aborted ? 1 : 0;
}

/** The run as an aligned text table: one line per metric, a ⚠ where a figure is not what it should be. */
function summary(run: RunRecord): string {
  const { machine } = run;
  const rows: string[][] = [["benchmark", "metric", "value", "unit", ""]];
  for (const [name, record] of Object.entries(run.benchmarks)) {
    if (record.status === "ok" && (name.startsWith("side-by-side") || name === "chart-fleet")) continue; // own table
    if (record.status === "failed") {
      rows.push([name, "FAILED", "", "", record.error.split("\n")[0] ?? ""]);
      continue;
    }
    for (const metric of record.metrics)
      rows.push([name, metric.label, String(metric.value), metric.unit, note(metric)]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => (i === 2 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
  const where = `${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}, kube ${machine.kubernetes}, load ${machine.loadAverage}`;
  return `\n${run.date}  ${run.commit}  ${where}\n\n${lines.join("\n")}`;
}

function note(metric: Metric): string {
  if (metric.expected === undefined) return "";
  return metric.value === metric.expected ? `(expected ${metric.expected})` : `⚠ expected ${metric.expected}`;
}

// exit, not exitCode: an idle keep-alive socket must not hold the process open; operators left are killed on exit.
// Only when run: tests read the command line through benchCommandLine.
if (import.meta.main) process.exit(await main());
