/**
 * Names and labels shared by every object the component builds, so selectors, bindings and the Deployment agree
 * by construction.
 */
import type { OperatorSettings } from "./settings.ts";

/** The Kubernetes object names of one installation, all derived from the component's name. */
export interface OperatorObjectNames {
  readonly serviceAccount: string;
  /** ClusterRole and ClusterRoleBinding; cluster-scoped, so two installations need two component names. */
  readonly clusterRole: string;
  /** Role and RoleBinding in each watched namespace (namespaced mode). */
  readonly watchRole: string;
  /** Role and RoleBinding for the Lease, in the operator's namespace. */
  readonly leaderElectionRole: string;
  readonly deployment: string;
  readonly metricsService: string;
  /** ClusterRole that lets a scraper `get /metrics` (bound by whoever scrapes); cluster-scoped. */
  readonly metricsReader: string;
  /** ClusterRoles whose rules on instances aggregate to `admin` and `edit`, and to `view` (tenant-roles.ts). */
  readonly tenantEditRole: string;
  readonly tenantViewRole: string;
  readonly podDisruptionBudget: string;
  /** Name of the Lease the replicas compete for (`--leader-election-id`). */
  readonly leaderElectionId: string;
  /** ValidatingAdmissionPolicy and its binding; cluster-scoped, like the ClusterRole. */
  readonly admissionPolicy: string;
  /** ValidatingAdmissionPolicy and binding for the platform policy's rules on instances (instance-policy.ts). */
  readonly instancePolicy: string;
  /** MutatingAdmissionPolicy and binding for the namespace defaults, when a policy gives them (defaults-policy.ts). */
  readonly defaultsPolicy: string;
  /** The Validating- and MutatingWebhookConfiguration (same name); cluster-scoped. */
  readonly webhookConfiguration: string;
  /** The Service in front of the replicas' webhook port (in-cluster). */
  readonly webhookService: string;
  /** The Secret with the webhook's CA and serving certificate, and the Role that lets the operator keep it. */
  readonly webhookCertificate: string;
  /** The ConfigMap of the CAs the chart sources are signed by (chart-sources-ca.ts). */
  readonly chartSourcesCa: string;
}

export function operatorObjectNames(settings: OperatorSettings): OperatorObjectNames {
  const name = settings.name;
  return {
    serviceAccount: name,
    clusterRole: name,
    watchRole: name,
    leaderElectionRole: `${name}-leader-election`,
    deployment: name,
    metricsService: `${name}-metrics`,
    metricsReader: `${name}-metrics-reader`,
    tenantEditRole: `${name}-tenant-edit`,
    tenantViewRole: `${name}-tenant-view`,
    podDisruptionBudget: name,
    leaderElectionId: `${name}-leader`,
    admissionPolicy: `${name}-children`,
    instancePolicy: `${name}-instances`,
    defaultsPolicy: `${name}-defaults`,
    webhookConfiguration: name,
    webhookService: `${name}-webhook`,
    webhookCertificate: `${name}-webhook-cert`,
    chartSourcesCa: `${name}-chart-sources-ca`,
  };
}

/** Labels that select the operator's pods. Never change them on a live install: selectors are immutable. */
export function selectorLabels(settings: OperatorSettings): Record<string, string> {
  return { "app.kubernetes.io/name": "myapp-operator", "app.kubernetes.io/instance": settings.name };
}

/** Labels of every object: the user's extra labels, then the well-known ones (which win). */
export function commonLabels(settings: OperatorSettings): Record<string, string> {
  return {
    ...settings.labels,
    ...selectorLabels(settings),
    "app.kubernetes.io/component": "operator",
    "app.kubernetes.io/part-of": "myapp-platform",
  };
}

/** Metadata of an object of this installation; `namespace` omitted for cluster-scoped objects. */
export function objectMeta(
  settings: OperatorSettings,
  name: string,
  namespace?: string,
): { name: string; namespace?: string; labels: Record<string, string>; annotations?: Record<string, string> } {
  return {
    name,
    ...(namespace === undefined ? {} : { namespace }),
    labels: commonLabels(settings),
    ...(Object.keys(settings.annotations).length > 0 ? { annotations: { ...settings.annotations } } : {}),
  };
}
