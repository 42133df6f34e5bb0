/** Appends one row per scenario run to test/chaos/RESULTS.md (the recorded figures of `npm run chaos`). */
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describeCommit } from "../../bench/support/record.ts";
import type { Figures } from "./scenarios.ts";

const chaosDir = path.dirname(fileURLToPath(import.meta.url));
const resultsFile = path.join(chaosDir, "RESULTS.md");

const intro = `# Chaos results

One row per scenario of \`npm run chaos\` (test/chaos/chaos.test.ts), appended by the run; a scenario that failed
records nothing (its assertion says why). Every fleet scenario checked, after converging: every instance Ready at
its generation with its image rolled out, exactly one workload and one Service per instance, no orphaned or
duplicated children, claims exactly per reclaim policy, no operator crash, no hot loop and no write once
converged (the outage, token and interrupted-up scenarios also: no instance ever Degraded). The fuzz scenario
checked that zod, the apiserver and the provider's check give every manifest the same verdict, each rejection
naming the broken fields. Figures from different machines do not compare (load: 1-minute load average at the
start).

| date (UTC) | commit | machine | scenario | figures |
| --- | --- | --- | --- | --- |
`;

/** Records `figures` of `scenario` unless MYAPP_CHAOS_RECORD=0. */
export function recordScenario(scenario: string, figures: Figures): void {
  if (process.env.MYAPP_CHAOS_RECORD === "0") return;
  if (!existsSync(resultsFile)) writeFileSync(resultsFile, intro);
  const date = new Date().toISOString().slice(0, 16).replace("T", " ");
  const machine = `${cpus().length} cores, ${Math.round(totalmem() / 1024 ** 3)} GiB, load ${loadavg()[0]?.toFixed(1)}`;
  const text = Object.entries(figures)
    .map(([key, value]) => `${key} ${value}`)
    .join(", ");
  appendFileSync(resultsFile, `| ${date} | ${describeCommit(chaosDir)} | ${machine} | ${scenario} | ${text} |\n`);
}
