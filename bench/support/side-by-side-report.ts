/**
 * The side-by-side run as a table (metric × floor / Go peer / TS / TS ÷ Go), printed, kept in RESULTS.md's
 * "Side by side" section (newest last, above its end marker, so sections others append after it stay apart), and
 * written whole to results/side-by-side-n<N>[-storage].json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { format, resolveConfig } from "prettier";
import type { BenchmarkResult } from "./benchmark.ts";
import type { Machine } from "./record.ts";
import { medianOf, ratio, rows, type SubjectFigures } from "../side-by-side.ts";
import { insertIntoSection } from "./results-section.ts";

const sectionStart = "## Side by side: TS operator vs Go controller-runtime peer";
const sectionEnd = "<!-- side-by-side runs end: new runs are inserted above this line -->";

const sectionIntro = `${sectionStart}

\`npm run bench -- side-by-side-1000\` (and \`-10000\`, \`-200-storage\`; see README.md): both operators and the floor
(the same children created directly, no operator) on the same cluster in the same run, interleaved, each operator
in its own namespace and behind its own counting TLS proxy. Figures are medians over rounds; "TS ÷ Go" is the
ratio of those medians (below 1: the TS operator is better). Load: 1-minute load average before each subject
started (min–max over the run).
`;

export interface RunContext {
  readonly date: string;
  readonly commit: string;
  readonly machine: Machine;
}

function cell(value: number): string {
  if (Number.isNaN(value)) return "—";
  if (value === Infinity) return "∞";
  return String(value);
}

/** The markdown table of one run, headed by its scenario, commit and load. */
export function renderSideBySide(name: string, result: BenchmarkResult, run: RunContext): string {
  const figures = (result.details?.rounds ?? []) as SubjectFigures[];
  const p = result.parameters;
  const loads = figures.map((f) => f.loadBefore);
  const load = loads.length ? `${Math.min(...loads)}–${Math.max(...loads)}` : "?";
  const lines = [
    `### ${run.date.slice(0, 16).replace("T", " ")} UTC · ${name}: N=${p.instances}, storage ${p.storage}, ` +
      `${p.rounds} round(s), concurrency ${p.concurrency}, idle/restart windows ${p.windowSeconds} s`,
    "",
    `commit ${run.commit}; ${run.machine.cores} cores, ${run.machine.memoryGiB} GiB, node ${run.machine.node}, ` +
      `kube ${run.machine.kubernetes}; load ${load}`,
    "",
    "| metric | floor | Go peer | TS operator | TS ÷ Go |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const row of rows) {
    const go = medianOf(figures, "go", row.key);
    const ts = medianOf(figures, "ts", row.key);
    const floor = row.operatorsOnly ? NaN : medianOf(figures, "floor", row.key);
    const unit = row.unit ? ` (${row.unit})` : "";
    lines.push(`| ${row.label}${unit} | ${cell(floor)} | ${cell(go)} | ${cell(ts)} | ${cell(ratio(ts, go))} |`);
  }
  const perRound = figures.map((f) => `${f.subject} r${f.round}: ${f.allReadyS} s (load ${f.loadBefore})`);
  lines.push("", `Time to all Ready per round: ${perRound.join("; ")}.`);
  return lines.join("\n");
}

/** Inserts the run's table into RESULTS.md's side-by-side section (creating the section at the end if missing). */
export function recordSideBySide(benchDir: string, table: string): string {
  const file = path.join(benchDir, "RESULTS.md");
  insertIntoSection(file, { end: sectionEnd, intro: sectionIntro }, table, false);
  return file;
}

/** Writes the whole run (every round, every request count) to results/side-by-side-n<N>[-storage].json. */
export async function writeSideBySideJson(
  benchDir: string,
  name: string,
  result: BenchmarkResult,
  run: RunContext,
): Promise<string> {
  const p = result.parameters;
  const file = path.join(
    benchDir,
    "results",
    `side-by-side-n${String(p.instances)}${p.storage === "none" ? "" : "-storage"}.json`,
  );
  return writeFormattedJson(file, { benchmark: name, ...run, ...result });
}

/** Writes `body` to `file` as JSON formatted by the repository's prettier settings (results/ is checked). */
export async function writeFormattedJson(file: string, body: unknown): Promise<string> {
  mkdirSync(path.dirname(file), { recursive: true });
  const options = (await resolveConfig(file)) ?? {};
  writeFileSync(file, await format(JSON.stringify(body), { ...options, filepath: file }));
  return file;
}
