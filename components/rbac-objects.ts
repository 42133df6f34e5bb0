/**
 * The RBAC objects (Roles, ClusterRoles and their bindings) that grant rbac-rules.ts's rules to the operator's
 * ServiceAccount. Cluster-wide mode: one ClusterRole with everything. Namespaced mode: a Role per watched namespace,
 * and a ClusterRole with only the cluster-scoped reads. In-cluster, the ClusterRole also has the secure-metrics
 * reviews. Both, when leader election may be on: a Role for the Lease in the operator's namespace; with the webhooks
 * on, a Role for their certificate Secret there and, in the ClusterRole, the CA injection into the webhook
 * configurations and the namespace reads (which remote chart sources need too).
 */
import type {
  ClusterRoleBindingManifest,
  ClusterRoleManifest,
  PolicyRuleManifest,
  RoleBindingManifest,
  RoleManifest,
} from "./manifest-types.ts";
import { chartKindRules } from "./chart-kinds.ts";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import {
  clusterScopedRules,
  clusterWideRules,
  leaderElectionRules,
  namespaceReadRules,
  secureMetricsRules,
  watchedNamespaceRules,
  type OperatorRule,
} from "./rbac-rules.ts";
import type { OperatorSettings } from "./settings.ts";
import { webhookCertificateRules, webhookClusterRules } from "./webhooks.ts";

/** A Role and the RoleBinding that grants it, in one namespace. */
export interface NamespacedGrant {
  readonly namespace: string;
  readonly role: RoleManifest;
  readonly binding: RoleBindingManifest;
}

export interface OperatorRbac {
  readonly clusterRole: ClusterRoleManifest;
  readonly clusterRoleBinding: ClusterRoleBindingManifest;
  /** One per watched namespace; empty in cluster-wide mode. */
  readonly watchedNamespaceGrants: readonly NamespacedGrant[];
  /**
   * The Lease grant, when the operator may elect a leader: in-cluster with 2 or more replicas, and always for an
   * external operator, whose flags are not ours to decide.
   */
  readonly leaderElection?: NamespacedGrant;
  /** Keeping the webhooks' certificate Secret, in the operator's namespace, when the webhooks are on. */
  readonly webhookCertificate?: NamespacedGrant;
}

export function operatorRbac(settings: OperatorSettings): OperatorRbac {
  const names = operatorObjectNames(settings);
  const clusterWide = settings.watchNamespaces.length === 0;
  const subject = { kind: "ServiceAccount", name: names.serviceAccount, namespace: settings.namespace };
  // The in-cluster operator serves /metrics with --metrics-secure (operator-flags.ts), which asks the apiserver.
  const metrics = settings.operatorPlacement === "in-cluster" ? secureMetricsRules : [];
  const webhooks = settings.webhooks.enabled
    ? webhookClusterRules(names.webhookConfiguration, settings.watchNamespaces, settings.webhooks.defaults)
    : [];
  // The chart engine reads a namespace's chart-sources annotation before a remote fetch (the webhooks' rules hold
  // the same read).
  const namespaceReads =
    !settings.webhooks.enabled && settings.chartSources.length > 0 ? namespaceReadRules(settings.watchNamespaces) : [];
  return {
    clusterRole: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: objectMeta(settings, names.clusterRole),
      rules: policyRules([
        ...(clusterWide ? [...clusterWideRules(), ...chartKindRules(settings.chartKinds)] : clusterScopedRules),
        ...metrics,
        ...webhooks,
        ...namespaceReads,
      ]),
    },
    clusterRoleBinding: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: objectMeta(settings, names.clusterRole),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: names.clusterRole },
      subjects: [subject],
    },
    watchedNamespaceGrants: settings.watchNamespaces.map((namespace) =>
      grant(
        settings,
        names.watchRole,
        namespace,
        policyRules([...watchedNamespaceRules, ...chartKindRules(settings.chartKinds)]),
        subject,
      ),
    ),
    ...(settings.leaderElection || settings.operatorPlacement === "external"
      ? {
          leaderElection: grant(
            settings,
            names.leaderElectionRole,
            settings.namespace,
            policyRules(leaderElectionRules(names.leaderElectionId)),
            subject,
          ),
        }
      : {}),
    ...(settings.webhooks.enabled
      ? {
          webhookCertificate: grant(
            settings,
            names.webhookCertificate,
            settings.namespace,
            policyRules(webhookCertificateRules(names.webhookCertificate, settings.webhooks.certManager !== undefined)),
            subject,
          ),
        }
      : {}),
  };
}

/** Mutable copies of the shared rules, in the shape Kubernetes and Pulumi take. */
export function policyRules(rules: readonly OperatorRule[]): PolicyRuleManifest[] {
  return rules.map((rule) => ({
    apiGroups: [...rule.apiGroups],
    resources: [...rule.resources],
    ...(rule.resourceNames ? { resourceNames: [...rule.resourceNames] } : {}),
    verbs: [...rule.verbs],
  }));
}

function grant(
  settings: OperatorSettings,
  name: string,
  namespace: string,
  rules: PolicyRuleManifest[],
  subject: { kind: string; name: string; namespace: string },
): NamespacedGrant {
  return {
    namespace,
    role: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: objectMeta(settings, name, namespace),
      rules,
    },
    binding: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: objectMeta(settings, name, namespace),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [subject],
    },
  };
}
