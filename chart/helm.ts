/**
 * The rendering port and its implementation: Helm itself, run as `helm template` in a child process. Helm's
 * output is the definition of "what this chart renders", so nothing here interprets templates; see the
 * README's "Charts" section for why a child process rather than Helm's engine compiled to WebAssembly.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { hookOf, parseManifests } from "./manifests.ts";
import type { Values } from "./values.ts";

const run = promisify(execFile);

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
}

export interface RenderResult {
  /** The YAML stream `helm template --skip-tests --no-hooks` prints (hooks and tests left out). */
  readonly manifest: string;
  /** Templates that define hooks or tests, which are not run (`helm.sh/hook` objects of a full render). */
  readonly hooks: readonly string[];
  /** Files under the chart's `crds/` directory: never applied by the operator. */
  readonly crds: readonly string[];
}

/** A chart that does not render: Helm's own message, which names the template file and line. */
export class ChartRenderError extends Error {
  override readonly name = "ChartRenderError";
}

/** The one wording of a render failure, for the operator's Degraded condition and the provider's preview. */
export function renderFailureMessage(source: string, error: ChartRenderError): string {
  return `${source} does not render: ${error.message}`;
}

/** Renders charts. */
export interface ChartRenderer {
  render(request: RenderRequest): Promise<RenderResult>;
}

export interface HelmOptions {
  /** The helm binary. @default "helm" (on PATH) */
  readonly binary?: string;
  /** Longest a render may take before it is an error. @default 60000 */
  readonly timeoutMs?: number;
}

/** Renders kept for reuse (a few hundred KiB each at most for an application chart). */
const maxCachedRenders = 256;

/** Output larger than this is an error rather than memory growth: 64 MiB of YAML is not an application. */
const maxOutputBytes = 64 * 1024 * 1024;

/** The renderer over a helm binary. Each render works in its own temporary directory, removed afterwards. */
export function helmRenderer(options: HelmOptions = {}): ChartRenderer {
  const binary = options.binary ?? "helm";
  const timeout = options.timeoutMs ?? 60_000;
  const helm = async (args: readonly string[]): Promise<string> => {
    try {
      const { stdout } = await run(binary, args, {
        timeout,
        maxBuffer: maxOutputBytes,
        // No repositories, registries or plugins of whoever runs the operator: renders are hermetic.
        env: { PATH: process.env["PATH"] ?? "", HOME: tmpdir(), HELM_NO_PLUGINS: "1" },
      });
      return stdout;
    } catch (error) {
      throw new ChartRenderError(helmMessage(error), { cause: error });
    }
  };
  // Children's events wake a reconcile often (every rollout step); the same chart, values and cluster always
  // render the same, so recent renders are reused instead of running helm three times again.
  const recent = new Map<string, RenderResult>();
  return {
    async render(request) {
      const key = createHash("sha256")
        .update(request.chart)
        .update(JSON.stringify([request.release, request.namespace, request.values, request.capabilities ?? {}]))
        .digest("hex");
      const cached = recent.get(key);
      if (cached) return cached;
      const result = await renderOnce(request);
      if (recent.size >= maxCachedRenders) recent.delete(recent.keys().next().value ?? "");
      recent.set(key, result);
      return result;
    },
  };

  async function renderOnce(request: RenderRequest): Promise<RenderResult> {
    const dir = await mkdtemp(join(tmpdir(), "myapp-chart-"));
    try {
      const chart = join(dir, "chart.tgz");
      const values = join(dir, "values.json");
      await writeFile(chart, request.chart);
      await writeFile(values, JSON.stringify(request.values));
      const common = [
        "template",
        request.release,
        chart,
        "--namespace",
        request.namespace,
        "--values",
        values,
        ...capabilityFlags(request.capabilities),
      ];
      const [manifest, full, crds] = await Promise.all([
        helm([...common, "--skip-tests", "--no-hooks"]),
        // The full render only tells which hooks and tests were left out, for the status.
        helm(common),
        helm(["show", "crds", chart]),
      ]);
      return { manifest, hooks: hookSources(full), crds: crdNames(crds) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

function capabilityFlags(capabilities: Capabilities | undefined): string[] {
  const flags: string[] = [];
  if (capabilities?.kubeVersion) flags.push("--kube-version", capabilities.kubeVersion);
  for (const apiVersion of capabilities?.apiVersions ?? []) flags.push("--api-versions", apiVersion);
  return flags;
}

/** Templates whose objects are hooks or tests (a `helm.sh/hook` annotation). */
function hookSources(stream: string): string[] {
  const hooks = parseManifests(stream).filter((manifest) => hookOf(manifest.object) !== undefined);
  return [...new Set(hooks.map((manifest) => manifest.source))].sort();
}

/** Names of the CRDs `helm show crds` prints. */
function crdNames(stream: string): string[] {
  return parseAllDocuments(stream)
    .map((document) => (document.toJSON() as { metadata?: { name?: unknown } } | null)?.metadata?.name)
    .filter((name): name is string => typeof name === "string");
}

/** Helm's error line without its `Error: ` prefix, or the process failure when Helm said nothing. */
function helmMessage(error: unknown): string {
  const failure = error as { stderr?: string; killed?: boolean; code?: unknown; message?: string };
  if (failure.killed) return "helm template took too long and was stopped";
  if (failure.code === "ENOENT") return "the helm binary was not found (set MYAPP_HELM or put helm on PATH)";
  const stderr = (failure.stderr ?? "").trim();
  const line = stderr
    .split("\n")
    .filter((l) => l.startsWith("Error:"))
    .pop();
  return (line ?? stderr).replace(/^Error: /, "") || (failure.message ?? String(error));
}
