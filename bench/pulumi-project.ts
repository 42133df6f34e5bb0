/**
 * Pulumi in the shape of a user's own project, MyAppInstance beside CustomResource + `pulumi.com/waitFor`: a new
 * project outside the repository's node_modules (under .local/bench/), made of the README's package.json and
 * Pulumi.yaml, the package installed from the tarball of `npm pack` (of the committed tree, HEAD: uncommitted work
 * in the checkout neither breaks its build nor gets measured), and bench/pulumi-project/index.ts as its
 * program (the README's program at a benchmark's size: ClusterProvider, `MyAppOperator` with external placement,
 * instances bound to it by `platform`, object-valued inputs, a chart in a ConfigMap for a share of them). The
 * operator is the installed package's (`myapp-operator`, as the README's local recipe runs it), one process for
 * both variants. Timed and compared by the runner bench/pulumi-up.ts uses (support/pulumi-variants.ts).
 *
 * Knobs: BENCH_PROJECT_SIZES (default "20,100,500"), BENCH_PROJECT_ROUNDS (2), BENCH_PROJECT_PREVIEWS (3 no-op
 * previews after each up), BENCH_PROJECT_CHART_EVERY (4: every 4th instance has a chart). Runs under `npm run bench
 * -- pulumi-project`, or on its own: `node bench/pulumi-project.ts` (prints, records nothing).
 */
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { localDir, repoRoot, toolchainBinDir } from "../tools/lib/paths.ts";
import { ensurePulumiHome } from "../tools/lib/pulumi.ts";
import { committedSource, npmInstall, packedProject } from "../tools/lib/packed-project.ts";
import { readmeProjectFiles } from "../tools/lib/readme-project.ts";
import type { Benchmark, BenchContext, BenchmarkResult } from "./support/benchmark.ts";
import { deleteNamespace, ensureCrd } from "./support/cluster.ts";
import { startOperator, waitForReady } from "./support/operator-process.ts";
import { runVariants, sizesSetting, variantMetrics } from "./support/pulumi-variants.ts";
import { integerSetting } from "./support/settings.ts";
import { runOnItsOwn } from "./support/standalone.ts";

const run = promisify(execFile);
const program = new URL("./pulumi-project/index.ts", import.meta.url);
/** What the program declares as the platform's chartKinds, as the operator's flag: the example chart has ConfigMaps. */
const chartKinds = "apps/v1/Deployment,apps/v1/StatefulSet,v1/Service,v1/ConfigMap";

export const pulumiProject: Benchmark = {
  name: "pulumi-project",
  description:
    "a user's own project (tarball, platform, resources/values/chart): up / no-op preview / destroy of 20, 100 " +
    "and 500, MyAppInstance beside CustomResource+waitFor",
  budgetMs: 90 * 60_000,
  headline: [
    { metric: "up500Ratio", header: "project up 500 ×CR" },
    { metric: "preview500Ratio", header: "project preview 500 ×CR" },
    { metric: "destroy500Ratio", header: "project destroy 500 ×CR" },
  ],
  run: runBenchmark,
};

async function runBenchmark(context: BenchContext): Promise<BenchmarkResult> {
  const { client, signal, log } = context;
  const rounds = integerSetting("BENCH_PROJECT_ROUNDS", 2);
  const previews = integerSetting("BENCH_PROJECT_PREVIEWS", 3);
  const sizes = sizesSetting("BENCH_PROJECT_SIZES", "20,100,500");
  const chartEvery = integerSetting("BENCH_PROJECT_CHART_EVERY", 4);
  const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
  // The chart is packed by the toolchain's helm, which the operator renders with too.
  process.env.MYAPP_TOOLCHAIN_BIN = binDir;
  const env = { ...(await ensurePulumiHome(binDir)), KUBECONFIG: process.env.KUBECONFIG ?? "" };
  await ensureCrd(client, signal);

  const suffix = randomBytes(3).toString("hex");
  const project = path.join(localDir, "bench", `pulumi-project-${suffix}`);
  const namespace = `bench-project-${suffix}`;
  const platform = `bench-platform-${suffix}`;
  try {
    log(`making the project in ${path.relative(repoRoot, project)}: npm pack of HEAD, npm install`);
    const files = readmeProjectFiles();
    files.set("index.ts", readFileSync(program, "utf8").replace('from "../../index.ts"', 'from "myapp-platform"'));
    await packedProject(project, files, env, await committedSource(`${project}-source`));
    await npmInstall(project, env);
    // The example chart as `helm package` packs it, for the program's ConfigMap (the README's "Charts" recipe).
    await run(path.join(binDir, "helm"), ["package", path.join(repoRoot, "examples/charts/myapp"), "-d", project], {
      env: { ...env, HOME: project },
    });
    renameSync(path.join(project, `myapp-${chartVersion()}.tgz`), path.join(project, "chart.tgz"));

    // The namespace is the program's (kept on destroy, as the README's); the operator watches it before it exists.
    const operator = await startOperator({
      namespaces: [namespace],
      script: path.join(project, "node_modules/myapp-platform/build/operator/main.js"),
      args: ["--concurrency=4", `--helm=${path.join(binDir, "helm")}`, `--chart-kinds=${chartKinds}`],
      signal,
    });
    try {
      await waitForReady(operator, signal);
      log(`namespace ${namespace}, platform ${platform}, operator pid ${operator.pid}`);
      const figures = await runVariants({
        pulumi: path.join(binDir, "pulumi"),
        projectDir: project,
        env,
        sizes,
        rounds,
        previews,
        stackEnv: (variant, size) => ({
          BENCH_PROJECT_NAMESPACE: namespace,
          BENCH_PROJECT_PLATFORM: platform,
          BENCH_PROJECT_INSTANCES: String(size),
          BENCH_PROJECT_CHART_EVERY: String(chartEvery),
          BENCH_PROJECT_VARIANT: variant,
        }),
        // The README's stack config: the cluster's kubeconfig.
        initStack: (cli) => cli(["config", "set", "kubeconfig", env.KUBECONFIG]).then(() => undefined),
        // Both variants start pulumi-kubernetes first (the platform): the traced preview's plugin start says nothing.
        tracePreview: false,
        signal,
        log,
      });
      return {
        parameters: { rounds, previews, sizes: sizes.join(","), chartEvery },
        metrics: variantMetrics(figures),
        details: { seconds: figures.seconds },
      };
    } finally {
      await operator.stop();
    }
  } finally {
    await deleteNamespace(client, namespace).catch(() => undefined);
    // The source's node_modules is a link to the checkout's: unlinked first, never followed.
    rmSync(path.join(`${project}-source`, "node_modules"), { force: true });
    for (const dir of [project, `${project}-source`]) rmSync(dir, { recursive: true, force: true });
  }
}

/** The example chart's version, which names the file `helm package` writes. */
function chartVersion(): string {
  const chart = parse(readFileSync(path.join(repoRoot, "examples/charts/myapp/Chart.yaml"), "utf8")) as {
    version: string;
  };
  return chart.version;
}

/** On its own: measure and print, record nothing (`npm run bench -- pulumi-project` records). */
if (import.meta.main) await runOnItsOwn(pulumiProject);
