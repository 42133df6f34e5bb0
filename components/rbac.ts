/**
 * The operator's permissions, as plain data: the single definition that the component's Roles and ClusterRoles,
 * dist/install.yaml and the tests all read. Each rule names what the operator does with it, so a reviewer can
 * check "least privilege" line by line. There is deliberately no rule for Secrets or Pods.
 */
import { group, plural } from "../api/index.ts";

/** One RBAC rule (rbac.authorization.k8s.io/v1 PolicyRule, resource rules only). */
export interface OperatorRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * What the operator does in every namespace it watches. Granted by a ClusterRole when it watches the whole
 * cluster, or by one Role per namespace when it watches a list.
 */
export const watchedNamespaceRules: readonly OperatorRule[] = [
  // Watch instances and add/remove the finalizer (update/patch); no create/delete: users own instances.
  { apiGroups: [group], resources: [plural], verbs: ["get", "list", "watch", "update", "patch"] },
  { apiGroups: [group], resources: [`${plural}/status`], verbs: ["get", "update", "patch"] },
  // Needed where the OwnerReferencesPermissionEnforcement admission plugin checks blockOwnerDeletion.
  { apiGroups: [group], resources: [`${plural}/finalizers`], verbs: ["update"] },
  // The children of an instance: a Deployment (stateless) or StatefulSet (with storage), and a Service.
  {
    apiGroups: ["apps"],
    resources: ["deployments", "statefulsets"],
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
  },
  { apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] },
  // StatefulSet volumes: patch to expand them, delete when storageReclaimPolicy is Delete. The StatefulSet
  // controller creates them, so no create.
  { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: ["get", "list", "watch", "patch", "delete"] },
  // Events on instances (kubectl describe), through the events.k8s.io API.
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
  // A StatefulSet that cannot create pods says so only in core/v1 events (FailedCreate): read them while pods are missing.
  { apiGroups: [""], resources: ["events"], verbs: ["list"] },
];

/**
 * Cluster-scoped reads, granted by a ClusterRole in both modes: StorageClasses are cluster-scoped, and the operator
 * reads `allowVolumeExpansion` before it grows a volume. Read-only and holding nothing sensitive, so a small
 * ClusterRole is a better trade than giving up the expansion check in namespaced mode.
 */
export const clusterScopedRules: readonly OperatorRule[] = [
  { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "list", "watch"] },
];

/** Leader election, in the operator's own namespace only (a Role there, never cluster-wide). */
export const leaderElectionRules: readonly OperatorRule[] = [
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
];

/** Rules of the ClusterRole when the operator watches every namespace. */
export function clusterWideRules(): readonly OperatorRule[] {
  return [...watchedNamespaceRules, ...clusterScopedRules];
}
