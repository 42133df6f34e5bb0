/**
 * What a render may not do with the objects it is allowed to create, beyond pod security (pod-security.ts):
 * borrow a ServiceAccount, expose a Service outside what the platform allows, mint a ServiceAccount token, scale a
 * workload it does not render, claim a volume size no budget can count or a volume that exists (claim-sizes.ts),
 * place its pods past the platform's scheduling, or reach out of the namespace with a cluster-scoped kind. Each
 * rule has its own reason, and every message names the object, the field and what is allowed. Pure.
 */
import {
  chartKindName,
  defaultChartServiceTypes,
  type ChartServiceType,
  type PodSecurityLevel,
  type StorageReclaimPolicy,
} from "../api/index.ts";
import { claimBindingRefusal, claimSizeRefusal, ephemeralVolumeRefusal } from "./claim-sizes.ts";
import type { RenderedObject } from "./manifests.ts";
import { objectName } from "./manifests.ts";
import { podSecurityRefusal } from "./pod-security.ts";
import {
  autoscalerKinds,
  platformLimitsRefusal,
  replicatedKinds,
  type PlatformLimits,
} from "./render-platform-limits.ts";
import { list, podTemplateOf, record, type PodTemplate } from "./pod-templates.ts";

/** Why a render is not applied: CamelCase reason and a message that says what to do. */
export interface RenderRefusal {
  readonly reason: string;
  readonly message: string;
  /**
   * The cause lies outside the spec (the namespace's budget, which other instances shrinking or a label raised may
   * free without this instance changing): the render is looked at again slowly. Otherwise only a change helps.
   */
  readonly outsideSpec?: boolean;
}

/** The platform's and the instance's limits on a render. */
export interface RenderPolicy {
  /** The instance's `spec.podSecurityLevel` (Restricted when unset). */
  readonly podSecurityLevel: PodSecurityLevel;
  /**
   * The instance's `spec.storageReclaimPolicy`: not a check but what the operator sets as every rendered
   * StatefulSet's `whenDeleted` (operator/chart/plan.ts). @default Retain
   */
  readonly storageReclaimPolicy?: StorageReclaimPolicy;
  /**
   * Service types a chart may render (MyAppOperator `chartServiceTypes`, `--chart-service-types`); ClusterIP is
   * always allowed.
   * @default defaultChartServiceTypes (ClusterIP only)
   */
  readonly serviceTypes?: readonly ChartServiceType[];
  /** The platform policy's per-instance limits, applied to what the render sets (render-platform-limits.ts). */
  readonly platform?: PlatformLimits;
}

/**
 * Kinds that live outside any namespace. None is in the allowed kinds today; this names them so that a render
 * carrying one is refused for what it is, even on a platform whose allow-list someone widened by mistake.
 */
export const clusterScopedKinds: readonly string[] = [
  "v1/Namespace",
  "v1/Node",
  "v1/PersistentVolume",
  "rbac.authorization.k8s.io/v1/ClusterRole",
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding",
  "apiextensions.k8s.io/v1/CustomResourceDefinition",
  "apiregistration.k8s.io/v1/APIService",
  "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration",
  "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration",
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding",
  "scheduling.k8s.io/v1/PriorityClass",
  "node.k8s.io/v1/RuntimeClass",
  "storage.k8s.io/v1/StorageClass",
  "storage.k8s.io/v1/CSIDriver",
  "storage.k8s.io/v1/VolumeAttachment",
  "networking.k8s.io/v1/IngressClass",
  "networking.k8s.io/v1/ServiceCIDR",
  "networking.k8s.io/v1/IPAddress",
  "certificates.k8s.io/v1/CertificateSigningRequest",
  "flowcontrol.apiserver.k8s.io/v1/FlowSchema",
  "flowcontrol.apiserver.k8s.io/v1/PriorityLevelConfiguration",
];

/** The refusal for a cluster-scoped object (reason `ChartClusterScopedKind`), or undefined. */
export function clusterScopedRefusal(object: RenderedObject, source: string): RenderRefusal | undefined {
  if (!clusterScopedKinds.includes(chartKindName(object))) return undefined;
  return {
    reason: "ChartClusterScopedKind",
    message:
      `${source} renders ${objectName(object)} of kind ${chartKindName(object)}, which is cluster-scoped; a chart ` +
      "renders only namespaced objects, in its instance's namespace",
  };
}

/**
 * The first rule the render breaks, or undefined: ServiceAccounts, Services, Secrets, autoscalers, claim sizes,
 * ephemeral volumes, claim binding, scheduling, then pod security and the platform's limits. `objects` is the whole
 * render (a pod may use a ServiceAccount rendered after it).
 */
export function renderPolicyRefusal(
  objects: readonly RenderedObject[],
  policy: RenderPolicy,
): RenderRefusal | undefined {
  return (
    serviceAccountRefusal(objects) ??
    serviceRefusal(objects, policy.serviceTypes ?? defaultChartServiceTypes) ??
    secretRefusal(objects) ??
    autoscalerTargetRefusal(objects) ??
    claimSizeRefusal(objects) ??
    ephemeralVolumeRefusal(objects) ??
    claimBindingRefusal(objects) ??
    schedulingRefusal(objects) ??
    podSecurityRefusal(objects, policy.podSecurityLevel) ??
    (policy.platform ? platformLimitsRefusal(objects, policy.platform) : undefined)
  );
}

/**
 * Pods run as `default` or as a ServiceAccount the same render creates (reason `ChartServiceAccountNotAllowed`):
 * another account of the namespace may hold permissions its owner granted for something else.
 */
export function serviceAccountRefusal(objects: readonly RenderedObject[]): RenderRefusal | undefined {
  const rendered = new Set(
    objects
      .filter((object) => object.apiVersion === "v1" && object.kind === "ServiceAccount")
      .map((object) => object.metadata.name),
  );
  for (const object of objects) {
    const template = podTemplateOf(object);
    if (!template) continue;
    // serviceAccount is the deprecated alias the apiserver copies into serviceAccountName.
    for (const field of ["serviceAccountName", "serviceAccount"]) {
      const account = template.spec[field];
      if (account === undefined || account === "" || account === "default" || rendered.has(String(account))) continue;
      return {
        reason: "ChartServiceAccountNotAllowed",
        message:
          `${objectName(object)} ${template.specPath}.${field} is ${JSON.stringify(account)}, a ServiceAccount the ` +
          "chart does not render; a chart's pods run as default or as a ServiceAccount the same chart creates",
      };
    }
  }
  return undefined;
}

/**
 * Services stay inside the cluster unless the platform allows more: no `spec.externalIPs` (CVE-2020-8554: any
 * address, intercepting others' traffic; reason `ChartServiceExternalIPs`), and `spec.type` ClusterIP or one the
 * platform lists (reason `ChartServiceTypeNotAllowed`).
 */
export function serviceRefusal(
  objects: readonly RenderedObject[],
  allowedTypes: readonly ChartServiceType[],
): RenderRefusal | undefined {
  const allowed = ["ClusterIP", ...allowedTypes.filter((type) => type !== "ClusterIP")];
  for (const object of objects) {
    if (object.apiVersion !== "v1" || object.kind !== "Service") continue;
    const spec = (object["spec"] ?? {}) as { externalIPs?: unknown; type?: unknown };
    if (Array.isArray(spec.externalIPs) ? spec.externalIPs.length > 0 : spec.externalIPs !== undefined) {
      return {
        reason: "ChartServiceExternalIPs",
        message:
          `${objectName(object)} spec.externalIPs is set; a chart's Services may not claim external IPs ` +
          "(they can intercept traffic to any address, CVE-2020-8554)",
      };
    }
    const type = spec.type ?? "ClusterIP";
    if (!allowed.includes(String(type))) {
      return {
        reason: "ChartServiceTypeNotAllowed",
        message:
          `${objectName(object)} spec.type is ${String(type)}; this platform allows ${allowed.join(", ")} ` +
          "(MyAppOperator chartServiceTypes, --chart-service-types)",
      };
    }
  }
  return undefined;
}

/**
 * No Secret of type `kubernetes.io/service-account-token` (reason `ChartSecretTypeNotAllowed`): the token
 * controller fills one with a token of whichever ServiceAccount its annotation names.
 */
export function secretRefusal(objects: readonly RenderedObject[]): RenderRefusal | undefined {
  const secret = objects.find(
    (object) =>
      object.apiVersion === "v1" &&
      object.kind === "Secret" &&
      object["type"] === "kubernetes.io/service-account-token",
  );
  if (!secret) return undefined;
  return {
    reason: "ChartSecretTypeNotAllowed",
    message:
      `${objectName(secret)} type is kubernetes.io/service-account-token; a chart may not mint ServiceAccount ` +
      "tokens (use a projected serviceAccountToken volume of the pod's own account)",
  };
}

/**
 * An autoscaler scales only a workload the same render creates (reason `ChartAutoscalerTargetNotRendered`): the
 * namespace's budget counts an autoscaler's `maxReplicas` against the workload it renders beside it
 * (render-usage.ts), so one aimed at another instance's workload (whose chart leaves `replicas` to an autoscaler)
 * would scale it past every budget with nothing counting it.
 */
export function autoscalerTargetRefusal(objects: readonly RenderedObject[]): RenderRefusal | undefined {
  const workloads = new Set(
    objects
      .filter((object) => replicatedKinds.has(`${object.apiVersion}/${object.kind}`))
      .map((object) => `${object.apiVersion}/${object.kind}/${object.metadata.name}`),
  );
  for (const object of objects) {
    if (!autoscalerKinds.has(`${object.apiVersion}/${object.kind}`)) continue;
    const target = record(record(object["spec"])["scaleTargetRef"]);
    const { apiVersion, kind, name } = target;
    const named = typeof kind === "string" && typeof name === "string";
    // apiVersion may be left out of a v1 autoscaler's target; the kind and name must match a rendered workload.
    const found =
      named &&
      (typeof apiVersion === "string"
        ? workloads.has(`${apiVersion}/${kind}/${name}`)
        : [...replicatedKinds].some(
            (workloadKind) => workloadKind.endsWith(`/${kind}`) && workloads.has(`${workloadKind}/${name}`),
          ));
    if (found) continue;
    const shown = named ? `${String(kind)}/${String(name)}` : "not a kind and name";
    return {
      reason: "ChartAutoscalerTargetNotRendered",
      message:
        `${objectName(object)} spec.scaleTargetRef is ${shown.length <= 80 ? shown : `${shown.slice(0, 80)}…`}, ` +
        "which the chart does not render; a chart's autoscalers scale only workloads it renders (Deployments, " +
        "StatefulSets), which its namespace's budget counts",
    };
  }
  return undefined;
}

/**
 * Why each pod spec field that places pods is the platform's, not a chart's. The built-in template sets none of
 * them, so a chart's pods are placed exactly as the built-in template's are. Left to charts, as harmless to others:
 * `nodeSelector`, node affinity and topology spread constraints (they narrow where the tenant's own pods go; taints
 * keep nodes kept for others out of reach), `preemptionPolicy` (it matters only with a priority above the
 * default, which `priorityClassName` is refused for, and Never only gives way), `overhead` (RuntimeClass admission
 * refuses it without a RuntimeClass, and it only makes a pod count bigger), `hostname`/`subdomain` (names within
 * the namespace).
 */
const schedulingFields: readonly (readonly [field: string, why: string])[] = [
  // Preemption evicts lower-priority pods of any namespace to make room.
  ["priorityClassName", "a priority class lets its pods preempt (evict) other tenants' pods"],
  // Set directly, the Priority admission plugin refuses it; with that plugin off it would be the pod's priority.
  ["priority", "a priority class lets its pods preempt (evict) other tenants' pods"],
  ["nodeName", "it binds the pod to a node past the scheduler, its taints and the platform's node choices"],
  ["schedulerName", "another scheduler need not keep to the platform's placement or preemption rules"],
  [
    "runtimeClassName",
    "a RuntimeClass brings its own tolerations, node selector and container runtime, which are the platform's to choose",
  ],
  ["tolerations", "tolerations let its pods onto nodes tainted for others, and keep them there when those evict"],
];

/** A field value that sets nothing: what charts render for an empty value (`""`, `[]`, null), or 0 for priority. */
function unset(value: unknown): boolean {
  return (
    value === undefined || value === null || value === "" || value === 0 || (Array.isArray(value) && value.length === 0)
  );
}

/**
 * A chart's pods are scheduled as the built-in template's (reason `ChartSchedulingNotAllowed`): no
 * `priorityClassName` (or `priority`), `nodeName`, `schedulerName` other than the default, `runtimeClassName` or
 * `tolerations`, and no pod (anti-)affinity term over other namespaces' pods (`namespaces` other than its own,
 * any `namespaceSelector`): the scheduler honours an existing pod's required anti-affinity against every pod that
 * comes after it, so a term over all namespaces keeps every other tenant's pods off its nodes (or zones). Empty
 * values (`tolerations: []`, `priorityClassName: ""`, what charts render by default) are allowed. A platform that
 * keeps tenants to nodes of their own does that per namespace, e.g. with the PodNodeSelector and
 * PodTolerationRestriction admission plugins, which apply after the render as to any pod.
 */
export function schedulingRefusal(objects: readonly RenderedObject[]): RenderRefusal | undefined {
  for (const object of objects) {
    const template = podTemplateOf(object);
    if (!template) continue;
    for (const [field, why] of schedulingFields) {
      const value = template.spec[field];
      if (unset(value) || (field === "schedulerName" && value === "default-scheduler")) continue;
      return schedulingRefused(object, `${template.specPath}.${field}`, value, why);
    }
    const affinity = crossNamespaceAffinity(template, object.metadata.namespace);
    if (affinity) {
      return schedulingRefused(
        object,
        affinity.path,
        affinity.value,
        "a pod affinity term over other namespaces' pods steers by them, and as anti-affinity keeps their pods off " +
          "the nodes its pods run on",
      );
    }
  }
  return undefined;
}

function schedulingRefused(object: RenderedObject, path: string, value: unknown, why: string): RenderRefusal {
  const shown = JSON.stringify(value) ?? String(value);
  return {
    reason: "ChartSchedulingNotAllowed",
    message:
      `${objectName(object)} ${path} is ${shown.length <= 66 ? shown : `${shown.slice(0, 64)}…`}; ${why}. A chart's ` +
      "pods are scheduled as the built-in template's: leave it unset or empty (a platform that keeps tenants to " +
      "their own nodes does so per namespace, e.g. with the PodNodeSelector and PodTolerationRestriction admission " +
      "plugins)",
  };
}

/**
 * The first pod affinity or anti-affinity term (required or preferred) that looks at pods outside the object's
 * namespace: `namespaces` naming another one, or a `namespaceSelector` (even `{}`, which is every namespace).
 */
function crossNamespaceAffinity(
  template: PodTemplate,
  namespace: string | undefined,
): { path: string; value: unknown } | undefined {
  const affinity = record(template.spec["affinity"]);
  for (const kind of ["podAffinity", "podAntiAffinity"]) {
    const rules = record(affinity[kind]);
    const terms = [
      ...list(rules["requiredDuringSchedulingIgnoredDuringExecution"]).map((term, index) => ({
        path: `requiredDuringSchedulingIgnoredDuringExecution[${index}]`,
        term: record(term),
      })),
      ...list(rules["preferredDuringSchedulingIgnoredDuringExecution"]).map((weighted, index) => ({
        path: `preferredDuringSchedulingIgnoredDuringExecution[${index}].podAffinityTerm`,
        term: record(record(weighted)["podAffinityTerm"]),
      })),
    ];
    for (const { path, term } of terms) {
      const at = `${template.specPath}.affinity.${kind}.${path}`;
      const namespaces = term["namespaces"];
      const own = (name: unknown) => namespace !== undefined && name === namespace;
      if (!unset(namespaces) && !(Array.isArray(namespaces) && namespaces.every(own))) {
        return { path: `${at}.namespaces`, value: namespaces };
      }
      const selector = term["namespaceSelector"];
      if (selector !== undefined && selector !== null) return { path: `${at}.namespaceSelector`, value: selector };
    }
  }
  return undefined;
}
