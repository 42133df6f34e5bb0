/**
 * The operator's permissions, as plain data: the single definition that the component's Roles and ClusterRoles,
 * dist/install.yaml and the tests all read. Each rule names what the operator does with it, and each verb is one
 * the operator is seen to use: test/integration/least-privilege.test.ts records every request a real operator
 * process makes through a whole instance lifecycle and requires these rules to be exactly that set plus
 * {@link verbsNotSeenOnTheWire}. There is deliberately no rule for Pods, and none here for
 * Secrets (charts may create and patch them, never read them: chart-kinds.ts). The rules of the chart allow-list
 * (chart-kinds.ts) come on top; without a chart the operator uses only their list and watch (its informers), which
 * the same test checks.
 *
 * Verbs map from requests as the apiserver authorizes them: GET of one object `get`, of a collection `list`,
 * `?watch` `watch`, PATCH `patch` (server-side apply too), and a server-side apply that creates an object also
 * `create`. Every write is a patch but the Lease's renewal (an `update`); the one other `update` granted,
 * `myappinstances/finalizers`, is never called.
 */
import { group, plural } from "../api/index.ts";

/** One RBAC rule (rbac.authorization.k8s.io/v1 PolicyRule, resource rules only). */
export interface OperatorRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  /** Only these objects, where the rule allows it (never for create or list). */
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * What the operator does in every namespace it watches. Granted by a ClusterRole when it watches the whole
 * cluster, or by one Role per namespace when it watches a list.
 */
export const watchedNamespaceRules: readonly OperatorRule[] = [
  // Watch instances; add and remove the finalizer with a merge patch. No create/delete: users own instances.
  { apiGroups: [group], resources: [plural], verbs: ["list", "watch", "patch"] },
  // Status by server-side apply of the status subresource.
  { apiGroups: [group], resources: [`${plural}/status`], verbs: ["patch"] },
  // Never called: the OwnerReferencesPermissionEnforcement admission plugin checks it before it lets the
  // children's blockOwnerDeletion through.
  { apiGroups: [group], resources: [`${plural}/finalizers`], verbs: ["update"] },
  // The children of an instance: a Deployment (stateless) or StatefulSet (with storage), created and changed by
  // server-side apply (patch, plus create when the apply makes the object); deleted after a move or to re-create
  // a StatefulSet whose claim template or governing Service must change.
  {
    apiGroups: ["apps"],
    resources: ["deployments", "statefulsets"],
    verbs: ["get", "list", "watch", "create", "patch", "delete"],
  },
  // The instance's Service and a StatefulSet's headless governing Service; deleted with the instance.
  { apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch", "create", "patch", "delete"] },
  // StatefulSet volumes: cached by an informer (list, watch), patched to grow, deleted when storageReclaimPolicy
  // is Delete. The StatefulSet controller creates them.
  { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: ["list", "watch", "patch", "delete"] },
  // Events on instances (kubectl describe), through the events.k8s.io API: created, and a repeat patches the
  // event's series count (client-go's recorder does the same).
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
  // A StatefulSet that cannot create pods says so only in core/v1 events (FailedCreate): read while pods are missing.
  { apiGroups: [""], resources: ["events"], verbs: ["list"] },
];

/**
 * Cluster-scoped reads, granted by a ClusterRole in both modes: StorageClasses are cluster-scoped, and the operator
 * reads `allowVolumeExpansion` before it grows a volume (get) and looks for the default class (list). Read-only
 * and holding nothing sensitive, so a small ClusterRole is a better trade than giving up the checks in namespaced
 * mode. Not watched.
 */
export const clusterScopedRules: readonly OperatorRule[] = [
  { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "list"] },
];

/**
 * Reading the Namespaces the operator serves (only the watched ones in namespaced mode): their labels for the
 * webhooks (budgets, Pod Security) and their chart-sources annotation before a remote chart is fetched.
 */
export function namespaceReadRules(watchNamespaces: readonly string[]): readonly OperatorRule[] {
  return [
    {
      apiGroups: [""],
      resources: ["namespaces"],
      ...(watchNamespaces.length > 0 ? { resourceNames: [...watchNamespaces] } : {}),
      verbs: ["get"],
    },
  ];
}

/**
 * Leader election, in the operator's own namespace only (a Role there, never cluster-wide): create the Lease
 * (create cannot be limited by name), then read and renew only that one Lease (a replace: `update`).
 */
export function leaderElectionRules(leaseName: string): readonly OperatorRule[] {
  return [
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: [leaseName], verbs: ["get", "update"] },
  ];
}

/** Rules of the ClusterRole when the operator watches every namespace. */
export function clusterWideRules(): readonly OperatorRule[] {
  return [...watchedNamespaceRules, ...clusterScopedRules];
}

/**
 * Secure metrics, for an operator that serves /metrics with `--metrics-secure` (the component's in-cluster
 * operator): each scrape's bearer token is authenticated with a TokenReview and authorized for `get /metrics` with
 * a SubjectAccessReview, as controller-runtime's secure metrics. Cluster-scoped; granted only where the flag is set.
 */
export const secureMetricsRules: readonly OperatorRule[] = [
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];

/**
 * Granted although no request of the operator uses them: `group/resource verb` as the least-privilege test
 * writes them.
 */
export const verbsNotSeenOnTheWire: readonly string[] = [
  `${group}/${plural}/finalizers update`,
  // Children are read from the informers' caches, which hold only objects with the operator's label; a live GET
  // happens only after the apiserver refused a child, to name the other controller of a same-named object.
  "apps/deployments get",
  "apps/statefulsets get",
  "core/services get",
  // A series count is patched only when the same event repeats, which a short run may not provoke.
  "events.k8s.io/events patch",
];
