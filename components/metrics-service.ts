/** A ClusterIP Service in front of the operator's metrics port, for Prometheus (or a ServiceMonitor) to scrape. */
import type { ServiceManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames, selectorLabels } from "./metadata.ts";
import { metricsPath, metricsPort } from "./operator-endpoints.ts";
import type { OperatorSettings } from "./settings.ts";

/** The Service, or undefined when no operator pod runs in the cluster. */
export function metricsService(settings: OperatorSettings): ServiceManifest | undefined {
  if (settings.operatorPlacement !== "in-cluster") return undefined;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: objectMeta(settings, operatorObjectNames(settings).metricsService, settings.namespace),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(settings),
      // HTTPS: the in-cluster operator serves /metrics with --metrics-secure (operator-flags.ts), over TLS.
      ports: [{ name: "metrics", port: metricsPort, targetPort: "metrics", protocol: "TCP", appProtocol: "https" }],
    },
  };
}

/** The in-cluster URL of the metrics endpoint, or undefined when the operator runs outside the cluster. */
export function metricsEndpoint(settings: OperatorSettings): string | undefined {
  if (settings.operatorPlacement !== "in-cluster") return undefined;
  const service = operatorObjectNames(settings).metricsService;
  return `https://${service}.${settings.namespace}.svc:${metricsPort}${metricsPath}`;
}
