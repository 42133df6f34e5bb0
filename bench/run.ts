/**
 * Runs the benchmarks against the local cluster, prints a summary table, and records the run: every figure in
 * bench/results/latest.json, one headline row appended to bench/RESULTS.md.
 *
 *   npm run bench                                  all of them
 *   npm run bench -- informer-latency              only the named ones
 *   npm run bench -- --no-record                   measure and print, record nothing (trying things out)
 *
 * Needs the local cluster (`npm run cluster -- up`) and KUBECONFIG=.local/kubeconfig. Each benchmark has a time
 * budget (3 min); when it passes, or on Ctrl-C, the benchmark stops waiting and cleans up what it started.
 */
import { fileURLToPath } from "node:url";
import path from "node:path";
import { parseArgs } from "node:util";
import { informerLatency } from "./informer-latency.ts";
import { operatorThroughput } from "./operator-throughput.ts";
import { pulumiPreview } from "./pulumi-preview.ts";
import { pulumiUp } from "./pulumi-up.ts";
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

/** Every benchmark, in the order they run (and their columns appear in RESULTS.md). */
export const benchmarks: readonly Benchmark[] = [operatorThroughput, informerLatency, pulumiPreview, pulumiUp];

const benchDir = path.dirname(fileURLToPath(import.meta.url));

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { "no-record": { type: "boolean" }, help: { type: "boolean" } },
  });
  if (values.help) {
    console.log(`Usage: npm run bench -- [--no-record] [${benchmarks.map((b) => b.name).join("|")} ...]`);
    for (const b of benchmarks) console.log(`  ${b.name.padEnd(22)} ${b.description}`);
    return 0;
  }
  const unknown = positionals.filter((name) => !benchmarks.some((b) => b.name === name));
  if (unknown.length > 0) {
    console.error(`unknown benchmark(s) ${unknown.join(", ")}; there are: ${benchmarks.map((b) => b.name).join(", ")}`);
    return 2;
  }
  const selected = positionals.length > 0 ? benchmarks.filter((b) => positionals.includes(b.name)) : benchmarks;

  const client = adminClient();
  const machine = await describeMachine(client);
  const date = new Date().toISOString();
  const interrupted = new AbortController();
  let current: AbortController | undefined;
  process.on("SIGINT", () => {
    if (interrupted.signal.aborted) process.exit(130); // second Ctrl-C: leave now (operators are killed on exit)
    process.stderr.write("\ninterrupted: cleaning up (Ctrl-C again to leave at once)\n");
    interrupted.abort();
    current?.abort();
  });

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
  if (!values["no-record"] && !interrupted.signal.aborted) {
    const latest = await writeLatest(benchDir, run);
    const results = appendResultsRow(benchDir, benchmarks, run);
    console.log(`\nrecorded: ${path.relative(process.cwd(), latest)}, ${path.relative(process.cwd(), results)}`);
  }
  return Object.values(records).some((r) => r.status === "failed") || interrupted.signal.aborted ? 1 : 0;
}

/** The run as an aligned text table: one line per metric, a ⚠ where a figure is not what it should be. */
function summary(run: RunRecord): string {
  const { machine } = run;
  const rows: string[][] = [["benchmark", "metric", "value", "unit", ""]];
  for (const [name, record] of Object.entries(run.benchmarks)) {
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
process.exit(await main());
