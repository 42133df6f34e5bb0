/**
 * Recording a run: results/latest.json holds every figure of the latest run with the machine it ran on, and
 * RESULTS.md gets one dated row of headline figures per run, so a regression shows up as a changed row.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";
import path from "node:path";
import { format, resolveConfig } from "prettier";
import type { KubeClient } from "../../kube/index.ts";
import type { Benchmark, BenchmarkResult } from "./benchmark.ts";
import { insertIntoSection, textAbove, type ResultsSection } from "./results-section.ts";

export interface Machine {
  readonly cores: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly os: string;
  /** The local cluster's kube-apiserver version. */
  readonly kubernetes: string;
  /**
   * The 1-minute load average when the run started: the control plane shares these cores with anything else
   * running (tests, builds), and a busy machine makes every figure slower.
   */
  readonly loadAverage: number;
}

export type BenchmarkRecord =
  | ({ readonly status: "ok"; readonly durationMs: number } & BenchmarkResult)
  | { readonly status: "failed"; readonly durationMs: number; readonly error: string };

export interface RunRecord {
  /** ISO 8601, UTC. */
  readonly date: string;
  /** Short commit of the working tree, `+dirty` when it has uncommitted changes. */
  readonly commit: string;
  readonly machine: Machine;
  readonly benchmarks: Readonly<Record<string, BenchmarkRecord>>;
}

export async function describeMachine(client: KubeClient): Promise<Machine> {
  const kubernetes = await client
    .raw("/version")
    .then((body) => String((JSON.parse(body) as { gitVersion?: string }).gitVersion))
    .catch(() => "unknown");
  return {
    cores: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round(totalmem() / 1024 ** 3),
    node: process.version,
    os: `${process.platform} ${release()}`,
    kubernetes,
    loadAverage: Math.round((loadavg()[0] ?? NaN) * 10) / 10,
  };
}

/** `git rev-parse --short HEAD`, plus `+dirty` when `git status` lists changes; "unknown" outside a checkout. */
export function describeCommit(cwd: string): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
    return git("rev-parse", "--short", "HEAD") + (git("status", "--porcelain") ? "+dirty" : "");
  } catch {
    return "unknown";
  }
}

/**
 * Writes the whole record as results/latest.json under `benchDir`, formatted as the repository's prettier config
 * wants it, so `npm run lint` (prettier --check .) stays clean after a run.
 */
export async function writeLatest(benchDir: string, run: RunRecord): Promise<string> {
  const file = path.join(benchDir, "results", "latest.json");
  mkdirSync(path.dirname(file), { recursive: true });
  const options = (await resolveConfig(file)) ?? {};
  writeFileSync(file, await format(JSON.stringify(run), { ...options, filepath: file }));
  return file;
}

const intro = `# Benchmark results

One row per \`npm run bench\` (bench/run.ts), appended; every figure of the latest run, with its parameters, is in
\`results/latest.json\`. Figures from different machines do not compare: the machine column says where a row ran and
how busy it was (load: the 1-minute load average when the run started; the control plane shares those cores).
A figure with an expected value (writes of a converged set: 0) is marked ⚠ when it differs. "—": not run or failed.

`;

/** The first section of RESULTS.md: one row of headline figures per `npm run bench`. */
const headlineSection: ResultsSection = {
  end: "<!-- headline runs end: new rows are inserted above this line -->",
  intro,
};

/**
 * Adds one row of headline figures to the headline section of RESULTS.md under `benchDir`. When the columns differ
 * from those of the section's last table (a benchmark was added), a new table with the new header starts.
 */
export function appendResultsRow(benchDir: string, benchmarks: readonly Benchmark[], run: RunRecord): string {
  const file = path.join(benchDir, "RESULTS.md");
  const columns = benchmarks.flatMap((benchmark) =>
    benchmark.headline.map((column) => ({ benchmark: benchmark.name, column })),
  );
  const header = `| date (UTC) | commit | machine | ${columns.map(({ column }) => column.header).join(" | ")} |`;
  const separator = `|${" --- |".repeat(columns.length + 3)}`;
  const cells = columns.map(({ benchmark, column }) => {
    const record = run.benchmarks[benchmark];
    if (record?.status !== "ok") return "—";
    if ("parameter" in column) return String(record.parameters[column.parameter] ?? "—");
    const metric = record.metrics.find((m) => m.id === column.metric);
    if (!metric || Number.isNaN(metric.value)) return "—";
    const off = metric.expected !== undefined && metric.value !== metric.expected;
    return off ? `${metric.value} ⚠` : String(metric.value);
  });
  const { machine } = run;
  const date = run.date.slice(0, 16).replace("T", " ");
  const machineCell = `${machine.cores} cores, ${machine.memoryGiB} GiB, node ${machine.node}, load ${machine.loadAverage}`;
  const row = `| ${date} | ${run.commit} | ${machineCell} | ${cells.join(" | ")} |`;

  const lastHeader = textAbove(file, headlineSection)
    .split("\n")
    .filter((line) => line.startsWith("| date"))
    .at(-1);
  // A new table (new columns) is set off by a blank line; a row of the last table follows it directly.
  const lines = lastHeader === header ? row : `\n${header}\n${separator}\n${row}`;
  insertIntoSection(file, headlineSection, lines, true);
  return file;
}
