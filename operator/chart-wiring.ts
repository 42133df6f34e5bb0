/**
 * The chart engine's wiring for the operator process: Helm (`--helm`) renders, sources read ConfigMaps through
 * the client and fetch registries and repositories over HTTP, `.Capabilities` come from the live cluster.
 */
import type { KubeClient, KubeObject } from "../kube/index.ts";
import { chartSource, helmRenderer, type Capabilities } from "./chart/index.ts";
import type { OperatorOptions } from "./options.ts";
import type { ChartDeps } from "./reconcile/index.ts";

/** The chart dependencies of reconcile for `options`. */
export function chartDeps(
  client: KubeClient,
  options: Pick<OperatorOptions, "helm" | "chartKinds" | "defaultChart">,
): ChartDeps {
  let capabilities: Promise<Capabilities> | undefined;
  return {
    renderer: helmRenderer({ binary: options.helm }),
    fetchChart: chartSource({
      readConfigMap: (name, namespace) =>
        client.find<KubeObject & { binaryData?: Record<string, string> }>("v1", "ConfigMap", name, namespace),
    }),
    allowedKinds: options.chartKinds,
    appliedWriteOnly: new Map(),
    ...(options.defaultChart ? { defaultChart: options.defaultChart } : {}),
    // The server's version, read once: what `.Capabilities.KubeVersion` says (helm install would ask the same).
    capabilities: () => {
      capabilities ??= client
        .raw("/version")
        .then((text) => ({ kubeVersion: (JSON.parse(text) as { gitVersion?: string }).gitVersion ?? "" }))
        .catch((error: unknown) => {
          capabilities = undefined;
          throw error;
        });
      return capabilities;
    },
  };
}
