/**
 * REST paths for the kinds this project touches. A static table instead of discovery: the set is small and
 * known, and it saves a round trip on every start.
 */
export interface ResourceType {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

const table: readonly ResourceType[] = [
  { apiVersion: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
  { apiVersion: "v1", kind: "Node", plural: "nodes", namespaced: false },
  { apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true },
  { apiVersion: "v1", kind: "Service", plural: "services", namespaced: true },
  { apiVersion: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true },
  { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  { apiVersion: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  { apiVersion: "v1", kind: "Event", plural: "events", namespaced: true },
  { apiVersion: "v1", kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", namespaced: true },
  { apiVersion: "v1", kind: "PersistentVolume", plural: "persistentvolumes", namespaced: false },
  { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", namespaced: true },
  { apiVersion: "apps/v1", kind: "StatefulSet", plural: "statefulsets", namespaced: true },
  { apiVersion: "apps/v1", kind: "ReplicaSet", plural: "replicasets", namespaced: true },
  { apiVersion: "coordination.k8s.io/v1", kind: "Lease", plural: "leases", namespaced: true },
  { apiVersion: "events.k8s.io/v1", kind: "Event", plural: "events", namespaced: true },
  { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", plural: "storageclasses", namespaced: false },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", plural: "roles", namespaced: true },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", plural: "rolebindings", namespaced: true },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", plural: "clusterroles", namespaced: false },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
  },
  {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
  },
  { apiVersion: "policy/v1", kind: "PodDisruptionBudget", plural: "poddisruptionbudgets", namespaced: true },
  // Create-only reviews, for the operator's authenticated /metrics.
  { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", plural: "tokenreviews", namespaced: false },
  {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    plural: "subjectaccessreviews",
    namespaced: false,
  },
  { apiVersion: "networking.k8s.io/v1", kind: "Ingress", plural: "ingresses", namespaced: true },
  {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    namespaced: true,
  },
  { apiVersion: "networking.k8s.io/v1", kind: "ServiceCIDR", plural: "servicecidrs", namespaced: false },
  { apiVersion: "example.com/v1", kind: "MyAppInstance", plural: "myappinstances", namespaced: true },
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    plural: "validatingadmissionpolicies",
    namespaced: false,
  },
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    plural: "validatingadmissionpolicybindings",
    namespaced: false,
  },
  // The namespace defaults, when the apiserver gives them (components/defaults-policy.ts; Kubernetes 1.36+).
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingAdmissionPolicy",
    plural: "mutatingadmissionpolicies",
    namespaced: false,
  },
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingAdmissionPolicyBinding",
    plural: "mutatingadmissionpolicybindings",
    namespaced: false,
  },
  // The admission webhooks' configurations, whose caBundle the operator injects (operator/admission/).
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    plural: "validatingwebhookconfigurations",
    namespaced: false,
  },
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    plural: "mutatingwebhookconfigurations",
    namespaced: false,
  },
  {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    plural: "selfsubjectaccessreviews",
    namespaced: false,
  },
];

/** The resource type of apiVersion+kind, or an error naming what is known. */
export function resourceType(apiVersion: string, kind: string): ResourceType {
  const found = table.find((t) => t.apiVersion === apiVersion && t.kind === kind);
  if (!found) throw new Error(`unknown resource ${apiVersion}/${kind}: add it to kube/resources.ts`);
  return found;
}

/** `/api/v1/namespaces/ns/pods/name` or `/apis/apps/v1/...`; namespace omitted lists across all namespaces. */
export function resourcePath(type: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = type.apiVersion.includes("/") ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
  const ns = type.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const tail = name ? `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ""}` : "";
  return `${base}${ns}/${type.plural}${tail}`;
}
