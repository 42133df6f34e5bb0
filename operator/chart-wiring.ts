/**
 * The chart engine's wiring for the operator process: Helm (`--helm`) renders, sources read ConfigMaps through
 * the client and fetch registries and repositories over HTTP, `.Capabilities` come from the live cluster.
 * Renders are bounded (`--max-concurrent-renders`, `--render-*`) and remote sources allowed only when
 * `--chart-sources` covers them (or the platform's own `--default-chart` names them), narrowed by the instance's
 * Namespace where its chart-sources annotation says so.
 */
import type { Logger } from "pino";
import { namespaceChartSourcesAnnotation } from "../api/index.ts";
import {
  ForbiddenError,
  readClusterCapabilities,
  realClock,
  type KubeClient,
  type KubeObject,
  type ObjectKey,
} from "../kube/index.ts";
import { cachedCapabilities, ChartFetchError, chartSource, helmRenderer } from "../chart/index.ts";
import { kubeLookups } from "./admission/lookups.ts";
import { recentReads } from "./admission/recent-reads.ts";
import { chartBudget } from "./chart-budget.ts";
import type { CacheReader } from "./runtime/cache.ts";
import { BackgroundJobs, type ChartDeps, type RenderedChildren } from "./chart/index.ts";
import type { OperatorOptions } from "./options.ts";

/** The chart dependencies of reconcile for `options`. */
export function chartDeps(
  client: KubeClient,
  options: Pick<
    OperatorOptions,
    | "helm"
    | "chartKinds"
    | "chartServiceTypes"
    | "defaultChart"
    | "maxConcurrentRenders"
    | "renderLimits"
    | "chartSources"
    | "policy"
  >,
  logger?: Pick<Logger, "warn" | "info">,
  controller: {
    /** The manager's cache: the namespace's instances, for its budgets (operator/chart-budget.ts). */
    readonly cache?: CacheReader;
    /** Controller.wake: a settled background job wakes its instance. */
    readonly wake?: (key: ObjectKey) => void;
    /** Controller.hasWork: a long render gives way while the controller has work (chart/long-render-yield.ts). */
    readonly busy?: () => boolean;
    /** Each instance's current render, which the cache's transforms ask too (operator/watched-kinds.ts). */
    readonly renderedChildren?: RenderedChildren;
    /** Bytes of renders kept for reuse (heap-budgets.ts). @default chart/helm.ts's */
    readonly renderCacheBytes?: number;
  } = {},
): ChartDeps {
  const { wake, busy, cache, renderedChildren, renderCacheBytes } = controller;
  const renderer = helmRenderer({
    binary: options.helm,
    limits: options.renderLimits,
    maxConcurrentRenders: options.maxConcurrentRenders,
    ...(renderCacheBytes !== undefined ? { cacheBytes: renderCacheBytes } : {}),
    ...(busy ? { busy } : {}),
    onYield: ({ namespace, release }, cpuSeconds) =>
      logger?.info(
        { namespace, release, cpuSeconds },
        "a long render gave way to waiting reconciles; it runs again once they are done",
      ),
  });
  if (renderer.enforcement === "watchdog") {
    logger?.warn(
      "prlimit was not found: helm's memory and CPU limits are enforced by polling /proc every 100 ms, which a " +
        "burst between two polls can exceed; install util-linux's prlimit (the operator image has it)",
    );
  }
  if (renderer.priority === "nice") {
    logger?.warn(
      "chrt was not found: a render that loops stays at nice +10 instead of moving to the idle scheduling class, " +
        "and delays the operator a little more; install util-linux's chrt (the operator image has it)",
    );
  }
  return {
    renderer,
    fetchChart: chartSource({
      readConfigMap: (name, namespace) =>
        client.find<KubeObject & { binaryData?: Record<string, string> }>("v1", "ConfigMap", name, namespace),
      // A chart's ConfigMap is read whole only when it changed: each fetch asks for its metadata alone.
      readConfigMapVersion: (name, namespace) => client.findMetadata("v1", "ConfigMap", name, namespace),
      // The list, and the platform's own default chart's location (options.ts puts both in the policy's).
      allowedSources: options.policy.chartSources,
      // A namespace may narrow the list; with no remote source allowed there is nothing to narrow, and no read.
      ...(options.chartSources.length > 0 ? { namespaceSources: namespaceChartSources(client) } : {}),
      ...(options.defaultChart ? { platformChart: options.defaultChart } : {}),
    }),
    allowedKinds: options.chartKinds,
    serviceTypes: options.chartServiceTypes,
    // The platform policy's per-instance limits hold for what a chart renders too: admission sees only the spec.
    platformLimits: {
      allowedRegistries: options.policy.allowedRegistries,
      maxReplicas: options.policy.maxReplicas,
      maxStorage: options.policy.maxStorage,
    },
    // ... and its namespace budgets too, counted on what the render runs (a chart decides its sizes itself).
    ...(cache ? { namespaceBudget: chartBudget(options.policy, kubeLookups(client, cache)) } : {}),
    appliedWriteOnly: new Map(),
    ...(renderedChildren ? { renderedChildren } : {}),
    // Fetches and renders beside the reconcile workers: a slow or hostile chart holds none of them, and a settled
    // job wakes its instance (`wake`: Controller.wake) instead of waiting for a poll.
    jobs: new BackgroundJobs(wake ? { onSettled: wake } : {}),
    ...(options.defaultChart ? { defaultChart: options.defaultChart } : {}),
    // The server's version and discovery (what `helm install` would ask), read again after a few minutes so a CRD
    // installed since shows up in `.Capabilities.APIVersions` (on the instance's next reconcile).
    capabilities: cachedCapabilities(() => readClusterCapabilities(client), { clock: realClock }),
  };
}

/**
 * A namespace's chart-sources annotation, read before a remote fetch; a namespace's instances ask again and again
 * (a fleet rendering after a start), so an answer is reused for 5 s, as admission reuses its Namespace reads.
 */
function namespaceChartSources(client: KubeClient): (namespace: string) => Promise<string | undefined> {
  return recentReads(async (namespace) => {
    try {
      const found = await client.find("v1", "Namespace", namespace);
      return found?.metadata.annotations?.[namespaceChartSourcesAnnotation];
    } catch (error) {
      if (!(error instanceof ForbiddenError)) throw error;
      // Retried: an RBAC grant heals it. Not a refusal of the source: the instance's spec is not at fault.
      throw new ChartFetchError(
        `the operator may not read Namespace ${namespace} for its ${namespaceChartSourcesAnnotation} annotation; ` +
          "grant it get on namespaces (MyAppOperator does whenever chartSources is set)",
        "ChartFetchFailed",
        { transient: true, cause: error },
      );
    }
  });
}
