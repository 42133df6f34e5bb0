/**
 * The ChartRenderer interface and its implementation: Helm itself, run as `helm template` in a child process. Helm's
 * output is the definition of "what this chart renders", so nothing here interprets templates; see the
 * README's "Charts" section for why a child process rather than Helm's engine compiled to WebAssembly.
 *
 * Helm is a guest in the operator's container: one process per render (the full stream, CRDs, hooks and tests
 * dropped here), at most `maxConcurrentRenders` at once, each held to memory, CPU-time, wall-time and output
 * limits (chart/guest-process.ts), a long one giving way while the operator has work (chart/long-render-yield.ts),
 * and renders reused from an LRU bounded by bytes.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fairSlots, type RenderPriority } from "./fair-slots.ts";
import { findChrt } from "./guest-priority.ts";
import { findPrlimit, GuestFailure, GuestYielded, runGuest } from "./guest-process.ts";
import { untilQuiet } from "./long-render-yield.ts";
import { ByteBoundedLru, namespaceShareBytes } from "./lru-cache.ts";
import { readDocuments, RenderYamlError } from "./render-yaml.ts";
import { rebuildChart, SchemaCheckFault, type RebuiltChart } from "./chart-archive.ts";
import { hookOf, shownChartName, type RenderedObject } from "./manifests.ts";
import { defaultMaxConcurrentRenders, defaultRenderLimits, limitMessage, type RenderLimits } from "./render-limits.ts";
import type { Values } from "./values.ts";

/** What the chart is told about the cluster (`.Capabilities`), as `helm template` takes it. */
export interface Capabilities {
  /** `v1.36.3`: the live cluster's version. */
  readonly kubeVersion?: string;
  /** `group/version` and `group/version/Kind` the cluster serves, for `.Capabilities.APIVersions.Has`. */
  readonly apiVersions?: readonly string[];
}

export interface RenderRequest {
  /** The packed chart (.tgz). */
  readonly chart: Uint8Array;
  /** Release name: the instance's name. */
  readonly release: string;
  /** The instance's namespace. */
  readonly namespace: string;
  readonly values: Values;
  readonly capabilities?: Capabilities;
  /** Whether a waiting change goes first (see RenderPriority); not part of what the render is. @default "normal" */
  readonly priority?: RenderPriority;
}

export interface RenderResult {
  /** The YAML stream `helm template --skip-tests --no-hooks` prints (hooks and tests left out). */
  readonly manifest: string;
  /** Templates that define hooks or tests, which are not run (`helm.sh/hook` objects of a full render). */
  readonly hooks: readonly string[];
  /** Names of the CRDs under the chart's `crds/` directories: never applied by the operator. */
  readonly crds: readonly string[];
}

/** A chart that does not render: Helm's own message (which names the template file and line), or a limit. */
export class ChartRenderError extends Error {
  override readonly name = "ChartRenderError";
  /** `ChartRenderFailed` (the chart's own error), or `ChartRenderLimit` (helm went over a platform limit). */
  readonly reason: "ChartRenderFailed" | "ChartRenderLimit";
  /**
   * True when a retry may succeed: only the wall-time limit, which a busy node can exceed while the render is
   * within its CPU time. Memory, CPU time and output depend on the chart and values alone.
   */
  readonly transient: boolean;
  constructor(message: string, options?: ErrorOptions & { reason?: ChartRenderError["reason"]; transient?: boolean }) {
    super(message, options);
    this.reason = options?.reason ?? "ChartRenderFailed";
    this.transient = options?.transient ?? false;
  }
}

/** The one wording of a render failure, for the operator's Degraded condition and the provider's preview. */
export function renderFailureMessage(source: string, error: ChartRenderError): string {
  return `${source} does not render: ${error.message}`;
}

/** Renders charts. */
export interface ChartRenderer {
  render(request: RenderRequest): Promise<RenderResult>;
}

/** The renderer over a helm binary, and how it enforces memory and CPU time. */
export interface HelmRenderer extends ChartRenderer {
  /** `prlimit`: kernel limits; `watchdog`: /proc polled every 100 ms (no prlimit on this machine). */
  readonly enforcement: "prlimit" | "watchdog";
  /** `idle`: a long render moves to the idle scheduling class (chrt); `nice`: it stays niced (no chrt here). */
  readonly priority: "idle" | "nice";
  readonly limits: RenderLimits;
}

export interface HelmOptions {
  /** The helm binary. @default "helm" (on PATH) */
  readonly binary?: string;
  /** Limits of each render. @default defaultRenderLimits */
  readonly limits?: Partial<RenderLimits>;
  /** Renders at once; more wait their turn. @default 2 */
  readonly maxConcurrentRenders?: number;
  /** Bytes of renders kept for reuse. @default 128 MiB */
  readonly cacheBytes?: number;
  /** The prlimit binary; false: the /proc watchdog even where prlimit exists (tests). @default found on the machine */
  readonly prlimit?: string | false;
  /** The chrt binary; false: long renders stay niced even where chrt exists (tests). @default found on the machine */
  readonly chrt?: string | false;
  /**
   * Whether the operator has reconciles waiting or running: a long render then gives way and runs once it is quiet
   * (long-render-yield.ts). Unset (the provider's previews): renders run through.
   */
  readonly busy?: () => boolean;
  /** Told when a long render gave way, and how much CPU it had spent. */
  readonly onYield?: (request: { readonly release: string; readonly namespace: string }, cpuSeconds: number) => void;
}

/**
 * Renders kept by default: tens of KiB each for an application chart with its read copy, so thousands of
 * instances' worth; and four namespaces' worth of renders at the default output limit (16 MiB and its copy each).
 */
export const defaultRenderCacheBytes = 128 * 1024 * 1024;

/** Rebuilt charts kept, in bytes of their archives: a chart is a few to a few hundred KiB packed. */
const rebuiltChartsBytes = 32 * 1024 * 1024;

/** The renderer over a helm binary. Each render works in its own temporary directory, removed afterwards. */
export function helmRenderer(options: HelmOptions = {}): HelmRenderer {
  const binary = options.binary ?? "helm";
  const limits: RenderLimits = { ...defaultRenderLimits, ...options.limits };
  const prlimit = options.prlimit === false ? undefined : (options.prlimit ?? findPrlimit());
  const chrt = options.chrt === false ? undefined : (options.chrt ?? findChrt());
  const slots = fairSlots(options.maxConcurrentRenders ?? defaultMaxConcurrentRenders);
  // Children's events wake a reconcile often (every rollout step); the same chart, values and cluster always
  // render the same, so recent renders are reused, and a render already running is joined rather than repeated.
  const cacheBytes = options.cacheBytes ?? defaultRenderCacheBytes;
  const namespaceShare = namespaceShareBytes(cacheBytes, largestRenderCacheBytes(limits));
  const recent = new ByteBoundedLru<RenderResult>(cacheBytes, renderCacheBytes, namespaceShare);
  const running = new Map<string, Promise<RenderResult>>();

  const helm = async (args: readonly string[], yieldWhen: (() => boolean) | undefined): Promise<string> => {
    try {
      return await runGuest({
        binary,
        args,
        limits,
        prlimit,
        chrt,
        ...(yieldWhen ? { yieldWhen } : {}),
        // No repositories, registries or plugins of whoever runs the operator: renders are hermetic.
        env: { PATH: process.env["PATH"] ?? "", HOME: tmpdir(), HELM_NO_PLUGINS: "1" },
      });
    } catch (error) {
      if (!(error instanceof GuestFailure)) throw error; // GuestYielded too: renderGivingWay's
      const { limit } = error.details;
      if (limit) throw new ChartRenderError(error.message, { reason: "ChartRenderLimit", transient: limit === "time" });
      throw new ChartRenderError(helmMessage(error), { cause: error });
    }
  };

  async function renderOnce(
    request: RenderRequest,
    archive: Uint8Array,
    yieldWhen?: () => boolean,
  ): Promise<RenderResult> {
    const dir = await mkdtemp(join(tmpdir(), "myapp-chart-"));
    try {
      const chart = join(dir, "chart.tgz");
      const values = join(dir, "values.json");
      await writeFile(chart, archive);
      await writeFile(values, JSON.stringify(request.values));
      // One process: the full stream (CRDs first, hooks and tests last), split here as Helm would have left them out.
      const full = await helm(
        [
          "template",
          request.release,
          chart,
          "--namespace",
          request.namespace,
          "--values",
          values,
          "--include-crds",
          ...capabilityFlags(request.capabilities),
        ],
        yieldWhen,
      );
      // Counted before anything parses the stream: each document is an object to apply, watch and prune.
      if (documentCount(full) > limits.objects) {
        throw new ChartRenderError(limitMessage("objects", limits), { reason: "ChartRenderLimit" });
      }
      return await splitFullRender(full);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  // Helm gets the chart rebuilt from what the operator read of it (chart-archive.ts). A fleet renders one chart with
  // many values: each chart is rebuilt once, however many renders ask for it at once, and kept for a while. Two
  // rebuilds at most at once, fair between namespaces: one holds up to ~75 MiB of buffers outside the heap for a
  // chart of Helm's 100 MiB (eight at once peaked at 597 MiB).
  const rebuildSlots = fairSlots(2);
  const rebuilt = new ByteBoundedLru<RebuiltChart>(rebuiltChartsBytes, (r) =>
    "archive" in r ? r.archive.length : 256,
  );
  const rebuilding = new Map<string, Promise<RebuiltChart>>();
  async function chartForHelm(chart: Uint8Array, namespace: string): Promise<RebuiltChart> {
    const digest = createHash("sha256").update(chart).digest("hex");
    const kept = rebuilt.get(digest);
    if (kept) return kept;
    let pending = rebuilding.get(digest);
    if (!pending) {
      pending = rebuildSlots(namespace, () => rebuildChart(chart))
        // A fault of the parsing thread says nothing about the chart: retried, and not kept as its verdict.
        .catch((error: unknown) => {
          if (!(error instanceof SchemaCheckFault)) throw error;
          throw new ChartRenderError(error.message, { transient: true, cause: error });
        })
        .then((result) => {
          rebuilt.set(digest, result);
          return result;
        })
        .finally(() => rebuilding.delete(digest));
      rebuilding.set(digest, pending);
    }
    return await pending;
  }

  // In a slot, giving way once if it turns long while the operator is busy; then in a slot again, run through.
  const { busy, onYield } = options;
  async function renderGivingWay(request: RenderRequest): Promise<RenderResult> {
    // Before a slot: the chart helm is to read, or why none.
    const chart = await chartForHelm(request.chart, request.namespace);
    if ("problem" in chart) throw new ChartRenderError(chart.problem);
    const inSlot = (yieldWhen?: () => boolean) =>
      slots(request.namespace, () => renderOnce(request, chart.archive, yieldWhen), request.priority);
    if (!busy) return inSlot();
    try {
      return await inSlot(busy);
    } catch (error) {
      if (!(error instanceof GuestYielded)) throw error;
      onYield?.(request, error.cpuSeconds);
    }
    await untilQuiet(busy, limits.timeoutSeconds * 1000);
    return inSlot();
  }

  return {
    enforcement: prlimit ? "prlimit" : "watchdog",
    priority: chrt ? "idle" : "nice",
    limits,
    async render(request) {
      const key = renderKey(request);
      const cached = recent.get(key);
      if (cached) return cached;
      let pending = running.get(key);
      if (!pending) {
        pending = renderGivingWay(request).finally(() => running.delete(key));
        running.set(key, pending);
      }
      const result = await pending;
      recent.set(key, result, request.namespace);
      return result;
    },
  };
}

/**
 * What determines a render's output: the chart's bytes (by digest), the values, release, namespace and
 * capabilities, each in a canonical form (sorted keys), so equal inputs share an entry whatever their key order.
 */
export function renderKey(request: RenderRequest): string {
  const capabilities = {
    kubeVersion: request.capabilities?.kubeVersion ?? "",
    apiVersions: [...(request.capabilities?.apiVersions ?? [])].sort(),
  };
  return createHash("sha256")
    .update(createHash("sha256").update(request.chart).digest())
    .update(canonicalJson([request.release, request.namespace, request.values, capabilities]))
    .digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * Roughly the memory a render takes: its text, and the JSON copy of its objects that its first read keeps beside
 * it (chart/render-reads.ts), which is never longer than the text. V8 keeps a string of Latin-1 characters in one
 * byte a character, any other in two.
 */
export function renderCacheBytes(result: RenderResult): number {
  const lists = [...result.hooks, ...result.crds].reduce((n, s) => n + stringBytes(s), 0);
  return 2 * stringBytes(result.manifest) + lists;
}

/** The most {@link renderCacheBytes} of a render within `limits`: its output all beyond Latin-1, and its copy. */
export function largestRenderCacheBytes(limits: Pick<RenderLimits, "outputMiB">): number {
  return 2 * 2 * limits.outputMiB * 1024 * 1024;
}

function stringBytes(text: string): number {
  return /[^\u0000-\u00ff]/.test(text) ? 2 * text.length : text.length;
}

/**
 * Splits `helm template --include-crds` output (hooks and tests included) into what the operator applies and what
 * it reports. Helm prints every template as `---\n# Source: <path>\n<yaml>\n`: the CRD files first, then the
 * templates (trimmed, then a newline), then hooks and tests. Kept are the chunks that are neither a CRD file
 * (`<chart>/crds/…`, subcharts' included) nor a hook (`helm.sh/hook`), in order: exactly the stream
 * `helm template --skip-tests --no-hooks` prints. Only CRD files and chunks that mention `helm.sh/hook` are parsed,
 * yielding to the event loop as they are (render-yaml.ts).
 */
export async function splitFullRender(stream: string): Promise<RenderResult> {
  const kept: string[] = [];
  const hooks = new Set<string>();
  const crds: string[] = [];
  for (const chunk of stream.split(/^(?=---[ \t]*\r?\n# Source: )/m)) {
    // Greedy to the line's end, then trimmed: a lazy `(.+?)\s*$` backtracks quadratically on a template path
    // padded with blanks, and a chart's file names are the tenant's.
    const source = /^# Source: ([^\n]+)/m.exec(chunk)?.[1]?.trimEnd();
    if (source === undefined) {
      if (chunk.trim() !== "") kept.push(chunk);
      continue;
    }
    if (/^([^/]+\/(charts\/[^/]+\/)*)?crds\//.test(source)) {
      for (const object of await documentsOf(chunk)) {
        if (typeof object.metadata?.name === "string") crds.push(shownChartName(object.metadata.name));
      }
      continue;
    }
    if (chunk.includes("helm.sh/hook")) {
      const objects = await documentsOf(chunk);
      if (objects.some((object) => object.metadata && hookOf(object as RenderedObject) !== undefined)) {
        hooks.add(shownChartName(source));
        continue;
      }
    }
    kept.push(chunk);
  }
  return { manifest: kept.length > 0 ? kept.join("") : "\n", hooks: [...hooks].sort(), crds };
}

/** The objects of one chunk; a chunk that is not valid YAML is kept as a template (planRender reports it). */
async function documentsOf(
  chunk: string,
): Promise<{ metadata?: { name?: unknown; annotations?: Record<string, string> } }[]> {
  try {
    return (await readDocuments(chunk))
      .map((document) => document.value)
      .filter((value): value is object => value !== null && typeof value === "object");
  } catch (error) {
    if (error instanceof RenderYamlError) return [];
    throw error;
  }
}

/** Documents in a rendered stream: Helm starts each with a `---` line. */
function documentCount(stream: string): number {
  return stream.match(/^---[ \t]*\r?$/gm)?.length ?? 0;
}

function capabilityFlags(capabilities: Capabilities | undefined): string[] {
  const flags: string[] = [];
  if (capabilities?.kubeVersion) flags.push("--kube-version", capabilities.kubeVersion);
  for (const apiVersion of capabilities?.apiVersions ?? []) flags.push("--api-versions", apiVersion);
  return flags;
}

/** Helm's error line without its `Error: ` prefix, or the process failure when Helm said nothing. */
function helmMessage(error: GuestFailure): string {
  const stderr = (error.details.stderr ?? "").trim();
  if (error.details.code === "ENOENT" || /failed to execute .*No such file/.test(stderr)) {
    return "the helm binary was not found (set MYAPP_HELM or put helm on PATH)";
  }
  const line = stderr
    .split("\n")
    .filter((l) => l.startsWith("Error:"))
    .pop();
  return (line ?? stderr).replace(/^Error: /, "") || error.message;
}
