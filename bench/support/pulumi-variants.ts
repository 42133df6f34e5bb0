/**
 * The runner the Pulumi comparisons share (bench/pulumi-up.ts, bench/pulumi-project.ts): one program deployed as
 * MyAppInstances and as the plain alternative (`k8s.apiextensions.CustomResource` + `pulumi.com/waitFor`), per size
 * and round a new stack of each (rounds alternate which goes first, so neither always meets a cooler or warmer
 * cluster), timed as a user waits: the built CLI's wall time of `up`, a no-op `preview` (several in a row: one is
 * ~2 s, where a busy second of the machine is as large as the difference measured) and `destroy`. Then the
 * medians, the MyAppInstance ÷ CustomResource ratio of each (goal ≤ 1.0), the lines `up` prints, and, from one extra
 * logged preview per size and variant, where a preview's time goes (pulumi-phases.ts). What a comparison adds is
 * its program, its project directory and the environment that tells the program the variant and size.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import type { Metric } from "./benchmark.ts";
import { pulumiPhases, type PulumiPhases } from "./pulumi-phases.ts";
import { quantile, round } from "./stats.ts";

const run = promisify(execFile);

export const variants = ["myapp", "customresource"] as const;
export type Variant = (typeof variants)[number];
export const operations = ["up", "preview", "destroy"] as const;
export type Operation = (typeof operations)[number];

/** `pulumi ARGS --stack S` in the project, with the stack's environment; its output and wall time. */
export type StackCli = (args: readonly string[]) => Promise<{ stdout: string; stderr: string; seconds: number }>;

export interface VariantsOptions {
  /** The built pulumi CLI. */
  readonly pulumi: string;
  /** The Pulumi project (its Pulumi.yaml): the program both variants run. */
  readonly projectDir: string;
  /** The CLI's environment (PULUMI_HOME, backend, PATH with Node ≥ 22.19, KUBECONFIG). */
  readonly env: NodeJS.ProcessEnv;
  readonly sizes: readonly number[];
  readonly rounds: number;
  /** No-op previews timed after each `up` (default 3); the preview's median is over all of them and all rounds. */
  readonly previews?: number;
  /** What tells the program which variant and how many instances, e.g. `{ BENCH_UP_VARIANT: variant }`. */
  stackEnv(variant: Variant, size: number): Record<string, string>;
  /**
   * One more no-op preview per size and variant with the engine's log, for the preview phases (default true). Its
   * plugin start is the first resource plugin's: meaningful only where each variant starts one plugin alone.
   */
  readonly tracePreview?: boolean;
  /** After `stack init`, before `up`, not timed: e.g. `pulumi config set`. */
  initStack?(cli: StackCli): Promise<void>;
  readonly signal: AbortSignal;
  log(message: string): void;
}

/** seconds[size][variant][operation]: one figure per round (per round and preview for `preview`). */
export type VariantSeconds = Record<number, Record<Variant, Record<Operation, number[]>>>;

export interface VariantFigures {
  readonly seconds: VariantSeconds;
  /** Lines `up` printed, per size and variant, one per round. */
  readonly upLines: Record<number, Record<Variant, number[]>>;
  /** From one logged no-op preview per size and variant. */
  readonly phases: Record<number, Partial<Record<Variant, PulumiPhases>>>;
}

/**
 * Runs every size, round and variant; a stack left by a failure or an abort is destroyed and removed before this
 * returns or throws.
 */
export async function runVariants(options: VariantsOptions): Promise<VariantFigures> {
  const { pulumi, projectDir, env, signal, log } = options;
  const figures: VariantFigures = { seconds: {}, upLines: {}, phases: {} };
  const stacks: string[] = [];
  const cliOf =
    (stack: string, stackEnv: NodeJS.ProcessEnv): StackCli =>
    async (args) => {
      const startedAt = performance.now();
      const result = await run(pulumi, [...args, "--stack", stack, "--cwd", projectDir, "--non-interactive"], {
        env: stackEnv,
        signal,
        maxBuffer: 256 * 1024 * 1024,
      });
      return { ...result, seconds: (performance.now() - startedAt) / 1000 };
    };
  try {
    for (const size of options.sizes) {
      const seconds: Record<Variant, Record<Operation, number[]>> = {
        myapp: { up: [], preview: [], destroy: [] },
        customresource: { up: [], preview: [], destroy: [] },
      };
      const upLines: Record<Variant, number[]> = { myapp: [], customresource: [] };
      figures.seconds[size] = seconds;
      figures.upLines[size] = upLines;
      for (let round = 0; round < options.rounds; round++) {
        const order = round % 2 === 0 ? variants : [...variants].reverse();
        for (const variant of order) {
          const stack = `bench-${variant}-${randomBytes(3).toString("hex")}`;
          stacks.push(stack);
          const cli = cliOf(stack, { ...env, ...options.stackEnv(variant, size) });
          await cli(["stack", "init"]);
          await options.initStack?.(cli);
          const up = await cli(["up", "--yes", "--skip-preview"]);
          const previews: number[] = [];
          for (let i = 0; i < (options.previews ?? 3); i++) {
            previews.push((await cli(["preview", "--expect-no-changes"])).seconds);
          }
          // Once per size and variant, not timed: the same preview with the engine's log, to see where it went.
          if (options.tracePreview !== false && round === options.rounds - 1) {
            const traced = await cli(["preview", "--expect-no-changes", "-v=9", "--logtostderr"]);
            figures.phases[size] = { ...figures.phases[size], [variant]: pulumiPhases(traced.stderr) };
          }
          const destroy = await cli(["destroy", "--yes", "--skip-preview"]);
          await cli(["stack", "rm", "--yes", "--force"]);
          stacks.pop();
          seconds[variant].up.push(up.seconds);
          seconds[variant].preview.push(...previews);
          seconds[variant].destroy.push(destroy.seconds);
          const lines = up.stdout.split("\n").length;
          upLines[variant].push(lines);
          log(
            `${size} × ${variant}: up ${up.seconds.toFixed(1)} s, ` +
              `no-op preview ${previews.map((p) => p.toFixed(2)).join(" / ")} s, ` +
              `destroy ${destroy.seconds.toFixed(1)} s, up printed ${lines} lines`,
          );
        }
      }
    }
    return figures;
  } finally {
    for (const stack of stacks) {
      const where = ["--stack", stack, "--cwd", projectDir, "--non-interactive"];
      await run(pulumi, ["destroy", "--yes", ...where], { env }).catch(() => undefined);
      await run(pulumi, ["stack", "rm", "--yes", "--force", ...where], { env }).catch((error: unknown) =>
        log(`could not remove stack ${stack}: ${String(error)}`),
      );
    }
  }
}

/**
 * Medians per size, variant and operation; the MyAppInstance ÷ CustomResource ratio of each (goal ≤ 1.0); the
 * lines `up` printed; the preview phases.
 */
export function variantMetrics(figures: VariantFigures): Metric[] {
  return [...timeMetrics(figures), ...phaseMetrics(figures.phases)];
}

function timeMetrics({ seconds, upLines }: VariantFigures): Metric[] {
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
function phaseMetrics(phases: VariantFigures["phases"]): Metric[] {
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

/** Instance counts from `process.env[name]` ("20,100,500"), or `fallback`; anything else is an error naming it. */
export function sizesSetting(name: string, fallback: string): number[] {
  const raw = process.env[name] || fallback;
  const sizes = raw.split(",").map((part) => Number(part.trim()));
  if (sizes.some((size) => !Number.isInteger(size) || size < 1))
    throw new Error(`${name} must be a comma-separated list of positive integers, got "${raw}"`);
  return sizes;
}
