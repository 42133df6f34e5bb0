/**
 * `pulumi preview` of a new stack declaring MyAppInstances (the dynamic provider: zod check plus the apiserver's
 * server-side dry-run of each instance), timed as a user waits for it: the built CLI's wall time, engine and
 * language host start included: a first (cold) preview, then previews of 1 and of 10 instances a few times each
 * (their medians), so the fixed cost and what more instances add show apart. Nothing is deployed; the throwaway stack and namespace are removed afterwards.
 *
 * Program: bench/pulumi-preview/index.ts. Knob: BENCH_PREVIEW_RUNS (previews per size, default 3).
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
import { createNamespace, deleteNamespace, ensureCrd } from "./support/cluster.ts";
import { integerSetting } from "./support/settings.ts";
import { quantile, round } from "./support/stats.ts";

const run = promisify(execFile);
const projectDir = fileURLToPath(new URL("./pulumi-preview/", import.meta.url));
const sizes = [1, 10] as const;

export const pulumiPreview: Benchmark = {
  name: "pulumi-preview",
  description: "`pulumi preview` of a new stack of 1 and of 10 MyAppInstances (dynamic provider, server dry-run)",
  budgetMs: 180_000,
  headline: [
    { metric: "preview1MedianS", header: "preview 1 inst s" },
    { metric: "preview10MedianS", header: "preview 10 inst s" },
  ],
  run: runBenchmark,
};

async function runBenchmark(context: BenchContext): Promise<BenchmarkResult> {
  const { client, signal, log } = context;
  const runs = integerSetting("BENCH_PREVIEW_RUNS", 3);
  const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
  const pulumi = path.join(binDir, "pulumi");
  // The project's Pulumi.yaml keeps stack config files here, out of the source tree.
  mkdirSync(path.join(localDir, "bench", "pulumi-stacks"), { recursive: true });
  await ensureCrd(client, signal);
  const namespace = await createNamespace(client, "bench-pp");
  const stack = `bench-${randomBytes(3).toString("hex")}`;
  const baseEnv = { ...(await ensurePulumiHome(binDir)), KUBECONFIG: process.env.KUBECONFIG ?? "" };
  const cli = (args: string[], env: NodeJS.ProcessEnv = baseEnv) =>
    run(pulumi, [...args, "--stack", stack, "--cwd", projectDir, "--non-interactive"], {
      env,
      signal,
      maxBuffer: 64 * 1024 * 1024,
    });
  log(`namespace ${namespace}, stack ${stack}`);
  let stackCreated = false;
  try {
    await run(pulumi, ["stack", "init", stack, "--cwd", projectDir, "--non-interactive"], { env: baseEnv, signal });
    stackCreated = true;
    const metrics: Metric[] = [];
    const engineSeconds: Record<string, number[]> = {};
    // The first preview of a stack pays for what later ones find warm (plugin load, the program's module graph in
    // the OS cache): recorded on its own, not mixed into the medians.
    const coldStartedAt = performance.now();
    await cli(["preview", "--json"], { ...baseEnv, BENCH_PREVIEW_NAMESPACE: namespace, BENCH_PREVIEW_INSTANCES: "1" });
    const coldSeconds = (performance.now() - coldStartedAt) / 1000;
    log(`first preview (cold): ${coldSeconds.toFixed(1)} s`);
    metrics.push({
      id: "previewColdS",
      label: "pulumi preview, first of the stack, 1 instance",
      value: round(coldSeconds, 2),
      unit: "s",
    });
    for (const size of sizes) {
      const env = { ...baseEnv, BENCH_PREVIEW_NAMESPACE: namespace, BENCH_PREVIEW_INSTANCES: String(size) };
      const wall: number[] = [];
      engineSeconds[size] = [];
      for (let i = 0; i < runs; i++) {
        const startedAt = performance.now();
        const { stdout } = await cli(["preview", "--json"], env);
        wall.push((performance.now() - startedAt) / 1000);
        const preview = JSON.parse(stdout) as { duration?: number; changeSummary?: Record<string, number> };
        // The stack itself is one of the creates; anything else means the preview did not do what it measures.
        if (preview.changeSummary?.create !== size + 1) {
          throw new Error(`preview of ${size} instance(s) planned ${JSON.stringify(preview.changeSummary)}`);
        }
        engineSeconds[size]!.push((preview.duration ?? NaN) / 1e9);
      }
      log(`${size} instance(s): ${wall.map((s) => s.toFixed(1)).join(" s, ")} s`);
      metrics.push(
        {
          id: `preview${size}MedianS`,
          label: `pulumi preview, ${size} instance(s), median wall`,
          value: round(quantile(wall, 0.5), 2),
          unit: "s",
        },
        {
          id: `preview${size}MaxS`,
          label: `pulumi preview, ${size} instance(s), slowest`,
          value: round(Math.max(...wall), 2),
          unit: "s",
        },
      );
    }
    return {
      parameters: { runs, sizes: sizes.join(",") },
      metrics,
      details: { engineSeconds },
    };
  } finally {
    if (stackCreated) {
      await run(pulumi, ["stack", "rm", stack, "--yes", "--force", "--cwd", projectDir, "--non-interactive"], {
        env: baseEnv,
      }).catch((error: unknown) => log(`could not remove stack ${stack}: ${String(error)}`));
    }
    await deleteNamespace(client, namespace).catch(() => undefined);
  }
}
