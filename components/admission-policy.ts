/**
 * A ValidatingAdmissionPolicy that limits what the operator's ServiceAccount may write to what it manages, even
 * where its RBAC reaches further (RBAC cannot say "only Deployments labelled so", and cluster-wide mode needs
 * Deployments in every namespace). It matches every kind the operator may write as an instance's child: each kind
 * a chart can render ({@link renderableChartKinds}, whether or not the platform allows it: a token granted more by
 * hand is held all the same) and PersistentVolumeClaims. Requests of that ServiceAccount to create, change or
 * delete one are admitted only when the object:
 *
 * - carries the operator's label (`app.kubernetes.io/managed-by: myapp-operator`; not `app.kubernetes.io/name`,
 *   which a chart's objects keep as the chart sets it);
 * - except for claims (made by the StatefulSet controller), has a controller ownerReference to a MyAppInstance;
 * - for workloads, has a pod template without host namespaces (hostNetwork, hostPID, hostIPC), privileged
 *   containers or hostPath volumes, and runs as the namespace's `default` ServiceAccount (serviceAccountName
 *   unset, "" or "default"), or, only where the platform lets charts render ServiceAccounts, one named after the
 *   controlling instance (the Helm release: `<instance>` or `<instance>-...`, as `helm create`'s fullname makes
 *   it). CEL cannot look the ServiceAccount up, so "rendered by the same release" is the operator's check
 *   (operator/chart/); the policy bounds the names;
 * - for Secrets, is not of type `kubernetes.io/service-account-token` (which would mint a token for any
 *   ServiceAccount of the namespace);
 * - for Services, has no `externalIPs` (CVE-2020-8554: traffic to any IP could be captured).
 *
 * So a leaked operator token can no longer run a privileged pod, borrow another ServiceAccount or mint a token.
 * The one object of the operator's own it matches is the admission webhooks' certificate Secret, spared by name.
 * Everyone else's requests are not matched at all (matchConditions on the username), so the policy costs the rest
 * of the cluster nothing. Admission policies are built into the apiserver (GA in Kubernetes 1.30): no webhook to
 * run. A denial reaches the operator as a 403 that is not RBAC's, which it reports as `ChildRejected`.
 */
import {
  apiVersion as instanceApiVersion,
  kind as instanceKind,
  renderableChartKinds,
  type ChartKind,
} from "../api/index.ts";
import type { ValidatingAdmissionPolicyBindingManifest, ValidatingAdmissionPolicyManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";

/**
 * The label every child of an instance carries, built-in or rendered by a chart (operator/desired/labels.ts and
 * operator/chart/owned.ts set it; a unit test holds them to it, since components/ may not import operator/).
 */
export const childLabelRequirements = {
  "app.kubernetes.io/managed-by": "myapp-operator",
} as const;

/** The object a request is about: the new one, or the old one of a DELETE. */
const target = "variables.target";

const labelChecks = Object.entries(childLabelRequirements)
  .map(([key, value]) => `'${key}' in ${target}.metadata.labels && ${target}.metadata.labels['${key}'] == '${value}'`)
  .join(" && ");

const podSpec = "variables.target.spec.template.spec";
const containerLists = ["containers", "initContainers", "ephemeralContainers"];
const notPrivileged = (list: string) =>
  `(!has(${podSpec}.${list}) || ${podSpec}.${list}.all(c, !has(c.securityContext) || ` +
  "!has(c.securityContext.privileged) || !c.securityContext.privileged))";
const hostNamespaces = ["hostNetwork", "hostPID", "hostIPC"];

/** The controller reference to a MyAppInstance, as CEL's `exists` tests it; `also` adds a condition on it (`r`). */
const controlledByInstance = (also = "") =>
  `(has(${target}.metadata.ownerReferences) && ${target}.metadata.ownerReferences.exists(r, ` +
  `r.apiVersion == '${instanceApiVersion}' && r.kind == '${instanceKind}' && has(r.controller) && r.controller` +
  `${also ? ` && ${also}` : ""}))`;

/**
 * The pod template's ServiceAccount (`field`: serviceAccountName, or its deprecated alias serviceAccount) is the
 * namespace's default one, or, with `ownNamed`, one named after the controlling instance.
 */
const allowedServiceAccount = (field: string, ownNamed: boolean) => {
  const name = `${podSpec}.${field}`;
  const own = ownNamed ? ` || ${controlledByInstance(`(${name} == r.name || ${name}.startsWith(r.name + '-'))`)}` : "";
  return `(!has(${name}) || ${name} == '' || ${name} == 'default'${own})`;
};

/** The kinds the policy holds to its rules: every kind charts can render, and the volume claims. */
const matchedKinds: readonly Pick<ChartKind, "apiVersion" | "plural">[] = [
  ...renderableChartKinds,
  { apiVersion: "v1", plural: "persistentvolumeclaims" },
];

/** One resource rule per API group and version, in the order the kinds are listed. */
function resourceRules(operations: string[]) {
  const byVersion = new Map<string, string[]>();
  for (const kind of matchedKinds) {
    const resources = byVersion.get(kind.apiVersion) ?? [];
    resources.push(kind.plural);
    byVersion.set(kind.apiVersion, resources);
  }
  return [...byVersion].map(([groupVersion, resources]) => {
    const slash = groupVersion.lastIndexOf("/");
    return {
      apiGroups: [slash < 0 ? "" : groupVersion.slice(0, slash)],
      apiVersions: [groupVersion.slice(slash + 1)],
      operations,
      resources,
    };
  });
}

/** The policy and its binding for the operator of `settings`. */
export function operatorAdmissionPolicy(settings: OperatorSettings): {
  readonly policy: ValidatingAdmissionPolicyManifest;
  readonly binding: ValidatingAdmissionPolicyBindingManifest;
} {
  const names = operatorObjectNames(settings);
  const username = `system:serviceaccount:${settings.namespace}:${names.serviceAccount}`;
  const operations = ["CREATE", "UPDATE", "DELETE"];
  const isWorkload = "request.resource.resource in ['deployments', 'statefulsets']";
  // Deletes are judged by the old object's labels and owner only: what is deleted no longer runs or routes.
  const deleting = "request.operation == 'DELETE'";
  // A chart may bring its own ServiceAccount only where the platform allows charts to render ServiceAccounts.
  const chartServiceAccounts = settings.chartKinds.some((k) => k.apiVersion === "v1" && k.kind === "ServiceAccount");
  return {
    policy: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: objectMeta(settings, names.admissionPolicy),
      spec: {
        // A policy that cannot be evaluated denies: the operator is the one that must not slip through.
        failurePolicy: "Fail",
        matchConstraints: { resourceRules: resourceRules(operations) },
        matchConditions: [
          { name: "operator-service-account", expression: `request.userInfo.username == '${username}'` },
          // The webhooks' certificate (webhooks.ts) is the operator's own Secret, no instance's child: RBAC
          // already holds the operator to that one name in its own namespace.
          ...(settings.webhooks.enabled
            ? [
                {
                  name: "not-the-webhook-certificate",
                  expression:
                    `!(request.resource.resource == 'secrets' && request.namespace == '${settings.namespace}' && ` +
                    `request.name == '${names.webhookCertificate}')`,
                },
              ]
            : []),
        ],
        variables: [{ name: "target", expression: "request.operation == 'DELETE' ? oldObject : object" }],
        validations: [
          {
            expression: `has(${target}.metadata.labels) && ${labelChecks}`,
            message:
              "the myapp operator may only write objects labelled " +
              Object.entries(childLabelRequirements)
                .map(([key, value]) => `${key}=${value}`)
                .join(", "),
            reason: "Forbidden",
          },
          {
            expression: `request.resource.resource == 'persistentvolumeclaims' || ${controlledByInstance()}`,
            message: `the myapp operator may only write objects controlled by a ${instanceKind}`,
            reason: "Forbidden",
          },
          {
            expression:
              `!(${isWorkload}) || ${deleting} || (` +
              [
                ...hostNamespaces.map((field) => `(!has(${podSpec}.${field}) || !${podSpec}.${field})`),
                `(!has(${podSpec}.volumes) || ${podSpec}.volumes.all(v, !has(v.hostPath)))`,
                ...containerLists.map(notPrivileged),
              ].join(" && ") +
              ")",
            message:
              "the myapp operator may not run pods with host namespaces (hostNetwork, hostPID, hostIPC), " +
              "privileged containers or hostPath volumes",
            reason: "Forbidden",
          },
          {
            expression:
              `!(${isWorkload}) || ${deleting} || (` +
              ["serviceAccountName", "serviceAccount"]
                .map((field) => allowedServiceAccount(field, chartServiceAccounts))
                .join(" && ") +
              ")",
            message: chartServiceAccounts
              ? "the myapp operator may only run pods as the namespace's default ServiceAccount or one named " +
                `after the ${instanceKind} that controls them (<instance> or <instance>-...)`
              : "the myapp operator may only run pods as the namespace's default ServiceAccount (charts may not " +
                "render ServiceAccounts on this platform)",
            reason: "Forbidden",
          },
          {
            expression:
              `request.resource.resource != 'secrets' || ${deleting} || ` +
              "!has(object.type) || object.type != 'kubernetes.io/service-account-token'",
            message: "the myapp operator may not write Secrets of type kubernetes.io/service-account-token",
            reason: "Forbidden",
          },
          {
            expression:
              `request.resource.resource != 'services' || ${deleting} || !has(object.spec) || ` +
              "!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0",
            message: "the myapp operator may not write Services with externalIPs",
            reason: "Forbidden",
          },
        ],
      },
    },
    binding: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: objectMeta(settings, names.admissionPolicy),
      spec: { policyName: names.admissionPolicy, validationActions: ["Deny"] },
    },
  };
}
