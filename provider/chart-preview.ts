/**
 * `pulumi preview` of an instance with a chart: render it with Helm exactly as the operator will (chart/), and
 * dry-run every rendered object on the apiserver, so a chart that does not render (Helm's message names the
 * template file and line), renders what the operator's render policy refuses (pod security, a borrowed
 * ServiceAccount, externalIPs, a cluster-scoped kind) or objects the apiserver rejects fails the preview, with the
 * words the operator's Degraded condition would use. A chart that cannot be fetched yet (say, its ConfigMap is created by
 * the same `pulumi up`) or a missing helm binary only skips this check, with a note.
 */
import { defaultPodSecurityLevel, serviceTypes, validateSpec, type ChartSpec } from "../api/index.ts";
import {
  cachedCapabilities,
  ChartFetchError,
  ChartRenderError,
  chartSource,
  chartValues,
  clusterScopedRefusal,
  describeSource,
  helmRenderer,
  readManifests,
  renderFailureMessage,
  renderPolicyRefusal,
  type Capabilities,
  type ChartRenderer,
} from "../chart/index.ts";
import { ApiError, readClusterCapabilities, realClock, type KubeClient, type KubeObject } from "../kube/index.ts";
import type { InputFailure } from "./check.ts";
import { fieldManager, type InstanceInputs } from "./inputs.ts";
import { desiredSpec } from "./manifest.ts";

export type ChartPreviewOutcome =
  { readonly checked: true; readonly failures: InputFailure[] } | { readonly checked: false; readonly note: string };

/**
 * `.Capabilities` per cluster connection (the provider keeps one client per connection): the version and the
 * discovered API set, read once per few minutes however many instances a preview renders.
 */
const capabilitiesByClient = new WeakMap<KubeClient, () => Promise<Capabilities>>();

function capabilitiesOf(client: KubeClient): Promise<Capabilities> {
  let read = capabilitiesByClient.get(client);
  if (!read) {
    read = cachedCapabilities(() => readClusterCapabilities(client), { clock: realClock });
    capabilitiesByClient.set(client, read);
  }
  return read();
}

let renderer: ChartRenderer | undefined;

/**
 * One renderer per provider process, with the operator's default limits: a preview of many instances runs at
 * most two helm processes at once, each bounded, and renders the same chart and values once.
 */
function previewRenderer(): ChartRenderer {
  renderer ??= helmRenderer({ binary: process.env["MYAPP_HELM"] ?? "helm" });
  return renderer;
}

/** Longer than this (a slow registry) and preview carries on without the chart check. */
export const chartPreviewTimeoutMs = 30_000;

/** The chart sources of the platform an instance runs on (MyAppOperator's `chartSources`, its default chart). */
export interface PlatformChartSources {
  readonly sources: readonly string[];
  readonly defaultChart?: ChartSpec;
}

/**
 * Renders and dry-runs the chart of `inputs` (which must have one). Never throws: the unexpected becomes a note.
 * With the platform's chart sources, a chart from elsewhere fails the preview in the operator's words, unfetched.
 */
export async function chartPreview(
  client: KubeClient,
  inputs: InstanceInputs,
  platform?: PlatformChartSources,
): Promise<ChartPreviewOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ChartPreviewOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve({ checked: false, note: `rendering took longer than ${chartPreviewTimeoutMs / 1000}s` }),
      chartPreviewTimeoutMs,
    );
    timer.unref();
  });
  try {
    return await Promise.race([renderAndDryRun(client, inputs, platform), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function renderAndDryRun(
  client: KubeClient,
  inputs: InstanceInputs,
  platform: PlatformChartSources | undefined,
): Promise<ChartPreviewOutcome> {
  const verdict = validateSpec(desiredSpec(inputs));
  if (!verdict.ok || !verdict.spec.chart) return { checked: false, note: "no valid chart to render" };
  const chart = verdict.spec.chart;
  const source = describeSource(chart, inputs.namespace);
  try {
    // With the platform's sources, what the operator allows (a namespace's annotation narrows them further: the
    // webhook and the operator see to that). Without, on the user's machine the stack is the platform: the source
    // it names is allowed (its host too, private or not), but no redirect or token service may lead the fetch
    // into a private range.
    const location = chart.oci ?? chart.repo;
    const bytes = await chartSource({
      readConfigMap: (name, namespace) =>
        client.find<KubeObject & { binaryData?: Record<string, string> }>("v1", "ConfigMap", name, namespace),
      ...(platform
        ? {
            allowedSources: platform.sources,
            allowListName: "the platform's chartSources",
            ...(platform.defaultChart ? { platformChart: platform.defaultChart } : {}),
          }
        : { allowedSources: location ? [location] : [], allowListName: "the stack" }),
    })(chart, inputs.namespace);
    const rendered = await previewRenderer().render({
      chart: bytes,
      release: inputs.name,
      namespace: inputs.namespace,
      values: chartValues(verdict.spec),
      capabilities: await capabilitiesOf(client),
    });
    const manifests = await readManifests(rendered.manifest);
    // The operator's render policy, so a chart it would refuse fails the preview in the same words. Which Service
    // types are allowed is the platform's setting, known to the operator only: the operator judges those.
    const refusal =
      manifests.map(({ source: template, object }) => clusterScopedRefusal(object, template)).find(Boolean) ??
      renderPolicyRefusal(
        manifests.map((manifest) => manifest.object),
        { podSecurityLevel: verdict.spec.podSecurityLevel ?? defaultPodSecurityLevel, serviceTypes },
      );
    if (refusal) {
      return {
        checked: true,
        failures: [{ property: "chart", reason: `${source}: ${refusal.reason}: ${refusal.message}` }],
      };
    }
    const failures: InputFailure[] = [];
    for (const { source: template, object } of manifests) {
      const namespaced = { ...object, metadata: { ...object.metadata, namespace: inputs.namespace } };
      try {
        await client.apply(namespaced as unknown as KubeObject, { fieldManager, force: true, dryRun: true });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 422) throw error;
        failures.push({
          property: "chart",
          reason: `the apiserver rejected an object the chart rendered (${template}): ${error.message}`,
        });
      }
    }
    return { checked: true, failures };
  } catch (error) {
    if (error instanceof ChartRenderError) {
      if (/helm binary was not found/.test(error.message)) return { checked: false, note: error.message };
      return { checked: true, failures: [{ property: "chart", reason: renderFailureMessage(source, error) }] };
    }
    if (error instanceof ChartFetchError && error.reason === "ChartSourceNotAllowed") {
      return { checked: true, failures: [{ property: "chart", reason: `ChartSourceNotAllowed: ${error.message}` }] };
    }
    if (error instanceof ChartFetchError) return { checked: false, note: error.message };
    return {
      checked: false,
      note: `${source} was not rendered: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
