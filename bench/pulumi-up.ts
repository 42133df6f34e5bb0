/**
 * `pulumi up`, a no-op `pulumi preview` and `pulumi destroy` of N instances through MyAppInstance, beside the same
 * instances as the plain alternative (`k8s.apiextensions.CustomResource` + `pulumi.com/waitFor: condition=Ready`),
 * in the same run, interleaved (rounds alternate which goes first), timed as a user waits: the built CLI's wall
 * time. One operator process serves both. Also the lines `up` prints, to keep its output readable at 100 instances,
 * and, from one extra logged preview per size and variant, where a preview's time goes (bench/support/pulumi-phases.ts).
 *
 * Program: bench/pulumi-up/index.ts. Knobs: BENCH_UP_SIZES (default "20,100"), BENCH_UP_ROUNDS (default 2).
 * Runs under `npm run bench -- pulumi-up`, or on its own: `node bench/pulumi-up.ts` (prints, records nothing).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { localDir, toolchainBinDir } from "../tools/lib/paths.ts";
import { ensurePulumiHome } from "../tools/lib/pulumi.ts";
import type { Benchmark, BenchContext, BenchmarkResult, Metric } from "./support/benchmark.ts";
import { adminClient, createNamespace, deleteNamespace, ensureCrd } from "./support/cluster.ts";
import { startOperator, waitForReady } from "./support/operator-process.ts";
import { integerSetting } from "./support/settings.ts";
import { pulumiPhases, type PulumiPhases } from "./support/pulumi-phases.ts";
import { quantile, round } from "./support/stats.ts";

const run = promisify(execFile);
const projectDir = fileURLToPath(new URL("./pulumi-up/", import.meta.url));
const variants = ["myapp", "customresource"] as const;
type Variant = (typeof variants)[number];
const operations = ["up", "preview", "destroy"] as const;
type Operation = (typeof operations)[number];

export const pulumiUp: Benchmark = {
  name: "pulumi-up",
  description:
    "pulumi up / no-op preview / destroy of 20 and 100 instances: MyAppInstance beside CustomResource+waitFor",
  budgetMs: 30 * 60_000,
  headline: [
    { metric: "up100Ratio", header: "up 100 ×CR" },
    { metric: "preview100Ratio", header: "preview 100 ×CR" },
    { metric: "upLines100", header: "up 100 lines" },
  ],
  run: runBenchmark,
};

async function runBenchmark(context: BenchContext): Promise<BenchmarkResult> {
  const { client, signal, log } = context;
  const rounds = integerSetting("BENCH_UP_ROUNDS", 2);
  const sizes = (process.env.BENCH_UP_SIZES ?? "20,100").split(",").map(Number);
  const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
  const pulumi = path.join(binDir, "pulumi");
  mkdirSync(path.join(localDir, "bench", "pulumi-stacks"), { recursive: true });
  await ensureCrd(client, signal);
  const namespace = await createNamespace(client, "bench-up");
  const baseEnv = { ...(await ensurePulumiHome(binDir)), KUBECONFIG: process.env.KUBECONFIG ?? "" };
  const operator = await startOperator({ namespaces: [namespace], args: ["--concurrency=4"], signal });
  const stacks: string[] = [];
  // seconds[size][variant][operation] = one figure per round
  const seconds: Record<number, Record<Variant, Record<Operation, number[]>>> = {};
  const upLines: Record<number, Record<Variant, number[]>> = {};
  const phases: Record<number, Partial<Record<Variant, PulumiPhases>>> = {};
  try {
    await waitForReady(operator, signal);
    log(`namespace ${namespace}, operator pid ${operator.pid}`);
    for (const size of sizes) {
      seconds[size] = {
        myapp: { up: [], preview: [], destroy: [] },
        customresource: { up: [], preview: [], destroy: [] },
      };
      upLines[size] = { myapp: [], customresource: [] };
      for (let round = 0; round < rounds; round++) {
        // Alternate who goes first, so neither always meets a cooler or warmer cluster.
        const order = round % 2 === 0 ? variants : [...variants].reverse();
        for (const variant of order) {
          const stack = `bench-${variant}-${randomBytes(3).toString("hex")}`;
          stacks.push(stack);
          const env = {
            ...baseEnv,
            BENCH_UP_NAMESPACE: namespace,
            BENCH_UP_INSTANCES: String(size),
            BENCH_UP_VARIANT: variant,
          };
          const cli = async (args: string[]) => {
            const startedAt = performance.now();
            const result = await run(pulumi, [...args, "--stack", stack, "--cwd", projectDir, "--non-interactive"], {
              env,
              signal,
              maxBuffer: 256 * 1024 * 1024,
            });
            return { ...result, seconds: (performance.now() - startedAt) / 1000 };
          };
          await cli(["stack", "init"]);
          const up = await cli(["up", "--yes", "--skip-preview"]);
          const preview = await cli(["preview", "--expect-no-changes"]);
          // Once per size and variant, not timed: the same preview with the engine's log, to see where it went.
          if (round === rounds - 1) {
            const traced = await cli(["preview", "--expect-no-changes", "-v=9", "--logtostderr"]);
            phases[size] = { ...phases[size], [variant]: pulumiPhases(traced.stderr) };
          }
          const destroy = await cli(["destroy", "--yes", "--skip-preview"]);
          await cli(["stack", "rm", "--yes", "--force"]);
          stacks.pop();
          const figures = seconds[size]![variant];
          figures.up.push(up.seconds);
          figures.preview.push(preview.seconds);
          figures.destroy.push(destroy.seconds);
          upLines[size]![variant].push(up.stdout.split("\n").length);
          log(
            `${size} × ${variant}: up ${up.seconds.toFixed(1)} s, no-op preview ${preview.seconds.toFixed(1)} s, ` +
              `destroy ${destroy.seconds.toFixed(1)} s, up printed ${up.stdout.split("\n").length} lines`,
          );
        }
      }
    }
    return {
      parameters: { rounds, sizes: sizes.join(",") },
      metrics: [...metricsOf(seconds, upLines), ...phaseMetrics(phases)],
      details: { seconds, previewPhases: phases },
    };
  } finally {
    for (const stack of stacks) {
      await run(pulumi, ["destroy", "--yes", "--stack", stack, "--cwd", projectDir, "--non-interactive"], {
        env: baseEnv,
      }).catch(() => undefined);
      await run(pulumi, ["stack", "rm", stack, "--yes", "--force", "--cwd", projectDir, "--non-interactive"], {
        env: baseEnv,
      }).catch((error: unknown) => log(`could not remove stack ${stack}: ${String(error)}`));
    }
    await operator.stop();
    await deleteNamespace(client, namespace).catch(() => undefined);
  }
}

/** Medians per size, variant and operation; the MyAppInstance/CustomResource ratio of each (target ≤ 1.0). */
function metricsOf(
  seconds: Record<number, Record<Variant, Record<Operation, number[]>>>,
  upLines: Record<number, Record<Variant, number[]>>,
): Metric[] {
  const metrics: Metric[] = [];
  const median = (values: number[]) => quantile(values, 0.5);
  for (const [size, byVariant] of Object.entries(seconds)) {
    for (const operation of operations) {
      const mine = median(byVariant.myapp[operation]);
      const plain = median(byVariant.customresource[operation]);
      const what = operation === "preview" ? "no-op pulumi preview" : `pulumi ${operation}`;
      metrics.push(
        {
          id: `${operation}${size}MyAppS`,
          label: `${what}, ${size} MyAppInstances, median`,
          value: round(mine, 2),
          unit: "s",
        },
        {
          id: `${operation}${size}CustomResourceS`,
          label: `${what}, ${size} CustomResources + waitFor, median`,
          value: round(plain, 2),
          unit: "s",
        },
        {
          id: `${operation}${size}Ratio`,
          label: `${what}, ${size}: MyAppInstance ÷ CustomResource`,
          value: round(mine / plain, 2),
          unit: "×",
        },
      );
    }
    for (const variant of variants) {
      metrics.push({
        id: variant === "myapp" ? `upLines${size}` : `upLines${size}CustomResource`,
        label: `lines pulumi up prints for ${size} ${variant === "myapp" ? "MyAppInstances" : "CustomResources"}`,
        value: median(upLines[Number(size)]![variant]),
        unit: "count",
      });
    }
  }
  return metrics;
}

/**
 * From one logged no-op preview per size and variant: how long the resource plugin took to start (the dynamic
 * provider's Node host beside pulumi-kubernetes' Go binary) and how long checking and diffing every resource took
 * once it was up. The two together are what differs between the variants; the program and engine are the same.
 */
function phaseMetrics(phases: Record<number, Partial<Record<Variant, PulumiPhases>>>): Metric[] {
  const metrics: Metric[] = [];
  const names: Record<Variant, [string, string]> = {
    myapp: ["MyApp", "MyAppInstance's dynamic-provider host"],
    customresource: ["CustomResource", "pulumi-kubernetes"],
  };
  for (const [size, byVariant] of Object.entries(phases)) {
    for (const variant of variants) {
      const phase = byVariant[variant];
      const [id, what] = names[variant];
      if (phase?.pluginLaunched !== undefined && phase.pluginReady !== undefined) {
        metrics.push({
          id: `previewPluginStart${size}${id}S`,
          label: `no-op preview, ${size}: ${what} plugin, launch to first answer`,
          value: round(phase.pluginReady - phase.pluginLaunched, 2),
          unit: "s",
        });
      }
      if (phase?.pluginReady !== undefined && phase.lastDiff !== undefined) {
        metrics.push({
          id: `previewCheckDiff${size}${id}S`,
          label: `no-op preview, ${size}: ${what}, plugin up to last diff`,
          value: round(phase.lastDiff - phase.pluginReady, 2),
          unit: "s",
        });
      }
    }
  }
  return metrics;
}

/** On its own: measure and print a summary, record nothing (`npm run bench -- pulumi-up` records). */
if (import.meta.main) {
  const interrupted = new AbortController();
  process.on("SIGINT", () => interrupted.abort());
  const startedAt = performance.now();
  const result = await runBenchmark({
    client: adminClient(),
    signal: interrupted.signal,
    log: (message) =>
      process.stderr.write(`[pulumi-up ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`),
  });
  for (const metric of result.metrics) console.log(`${metric.label.padEnd(70)} ${metric.value} ${metric.unit}`);
}
