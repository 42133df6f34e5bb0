/**
 * The chart engine's wiring for the operator process: Helm (`--helm`) renders, sources read ConfigMaps through
 * the client and fetch registries and repositories over HTTP, `.Capabilities` come from the live cluster.
 */
import { readClusterCapabilities, type KubeClient, type KubeObject } from "../kube/index.ts";
import { cachedCapabilities, chartSource, helmRenderer } from "./chart/index.ts";
import type { OperatorOptions } from "./options.ts";
import type { ChartDeps } from "./reconcile/index.ts";

/** The chart dependencies of reconcile for `options`. */
export function chartDeps(
  client: KubeClient,
  options: Pick<OperatorOptions, "helm" | "chartKinds" | "defaultChart">,
): ChartDeps {
  return {
    renderer: helmRenderer({ binary: options.helm }),
    fetchChart: chartSource({
      readConfigMap: (name, namespace) =>
        client.find<KubeObject & { binaryData?: Record<string, string> }>("v1", "ConfigMap", name, namespace),
    }),
    allowedKinds: options.chartKinds,
    appliedWriteOnly: new Map(),
    ...(options.defaultChart ? { defaultChart: options.defaultChart } : {}),
    // The server's version and discovery (what `helm install` would ask), read again after a few minutes so a CRD
    // installed since shows up in `.Capabilities.APIVersions` (on the instance's next reconcile).
    capabilities: cachedCapabilities(() => readClusterCapabilities(client)),
  };
}
