/**
 * `pulumi up`, a no-op `pulumi preview` and `pulumi destroy` of N instances through MyAppInstance, beside the same
 * instances as the plain alternative (`k8s.apiextensions.CustomResource` + `pulumi.com/waitFor: condition=Ready`),
 * in the same run, interleaved (rounds alternate which goes first), timed as a user waits: the built CLI's wall
 * time. One operator process serves both. Also the lines `up` prints, to keep its output readable at 100 instances,
 * and, from one extra logged preview per size and variant, where a preview's time goes (bench/support/pulumi-phases.ts).
 *
 * Program: bench/pulumi-up/index.ts. Knobs: BENCH_UP_SIZES (default "20,100"), BENCH_UP_ROUNDS (default 2),
 * BENCH_UP_PREVIEWS (default 3 no-op previews after each up).
 * Runs under `npm run bench -- pulumi-up`, or on its own: `node bench/pulumi-up.ts` (prints, records nothing).
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { localDir, toolchainBinDir } from "../tools/lib/paths.ts";
import { ensurePulumiHome } from "../tools/lib/pulumi.ts";
import type { Benchmark, BenchContext, BenchmarkResult } from "./support/benchmark.ts";
import { createNamespace, deleteNamespace, ensureCrd } from "./support/cluster.ts";
import { startOperator, waitForReady } from "./support/operator-process.ts";
import { runVariants, sizesSetting, variantMetrics } from "./support/pulumi-variants.ts";
import { integerSetting } from "./support/settings.ts";
import { runOnItsOwn } from "./support/standalone.ts";

const projectDir = fileURLToPath(new URL("./pulumi-up/", import.meta.url));

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
  const previews = integerSetting("BENCH_UP_PREVIEWS", 3);
  const sizes = sizesSetting("BENCH_UP_SIZES", "20,100");
  const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
  mkdirSync(path.join(localDir, "bench", "pulumi-stacks"), { recursive: true });
  await ensureCrd(client, signal);
  const namespace = await createNamespace(client, "bench-up");
  const env = { ...(await ensurePulumiHome(binDir)), KUBECONFIG: process.env.KUBECONFIG ?? "" };
  const operator = await startOperator({ namespaces: [namespace], args: ["--concurrency=4"], signal });
  try {
    await waitForReady(operator, signal);
    log(`namespace ${namespace}, operator pid ${operator.pid}`);
    const figures = await runVariants({
      pulumi: path.join(binDir, "pulumi"),
      projectDir,
      env,
      sizes,
      rounds,
      previews,
      stackEnv: (variant, size) => ({
        BENCH_UP_NAMESPACE: namespace,
        BENCH_UP_INSTANCES: String(size),
        BENCH_UP_VARIANT: variant,
      }),
      signal,
      log,
    });
    return {
      parameters: { rounds, previews, sizes: sizes.join(",") },
      metrics: variantMetrics(figures),
      details: { seconds: figures.seconds, previewPhases: figures.phases },
    };
  } finally {
    await operator.stop();
    await deleteNamespace(client, namespace).catch(() => undefined);
  }
}

/** On its own: measure and print, record nothing (`npm run bench -- pulumi-up` records). */
if (import.meta.main) await runOnItsOwn(pulumiUp);
