/**
 * Who may scrape the operator's /metrics. In the cluster the operator serves it with `--metrics-secure`: a request
 * needs a bearer token that the apiserver authenticates (TokenReview) and authorizes for `get` on the non-resource
 * URL /metrics (SubjectAccessReview), as controller-runtime's secure metrics. This ClusterRole grants exactly
 * that; bind it to the scraper's ServiceAccount (Prometheus, an agent), never to the operator.
 */
import type { ClusterRoleManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import { metricsPath } from "./operator-endpoints.ts";
import type { OperatorSettings } from "./settings.ts";

/** The ClusterRole, or undefined when no operator pod serves /metrics in the cluster. */
export function metricsReaderClusterRole(settings: OperatorSettings): ClusterRoleManifest | undefined {
  if (settings.operatorPlacement !== "in-cluster") return undefined;
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: objectMeta(settings, operatorObjectNames(settings).metricsReader),
    rules: [{ nonResourceURLs: [metricsPath], verbs: ["get"] }],
  };
}
