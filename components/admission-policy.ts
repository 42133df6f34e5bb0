/**
 * A ValidatingAdmissionPolicy that limits what the operator's ServiceAccount may write to what it manages, even
 * where its RBAC reaches further (RBAC cannot say "only Deployments labelled so", and cluster-wide mode needs
 * Deployments in every namespace). Requests of that ServiceAccount to create, change or delete a Deployment,
 * StatefulSet, Service or PersistentVolumeClaim are admitted only when the object:
 *
 * - carries the operator's label (`app.kubernetes.io/managed-by: myapp-operator`; not `app.kubernetes.io/name`,
 *   which a chart's objects keep as the chart sets it);
 * - except for claims (made by the StatefulSet controller), has a controller ownerReference to a MyAppInstance;
 * - for workloads, has a pod template without host namespaces (hostNetwork, hostPID, hostIPC), privileged
 *   containers or hostPath volumes.
 *
 * So a leaked operator token can no longer run a privileged pod anywhere. Everyone else's requests are not
 * matched at all (matchConditions on the username), so the policy costs the rest of the cluster nothing.
 * Admission policies are built into the apiserver (GA in Kubernetes 1.30): no webhook to run.
 */
import { apiVersion as instanceApiVersion, kind as instanceKind } from "../api/index.ts";
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

export function operatorAdmissionPolicy(settings: OperatorSettings): {
  readonly policy: ValidatingAdmissionPolicyManifest;
  readonly binding: ValidatingAdmissionPolicyBindingManifest;
} {
  const names = operatorObjectNames(settings);
  const username = `system:serviceaccount:${settings.namespace}:${names.serviceAccount}`;
  const operations = ["CREATE", "UPDATE", "DELETE"];
  const isWorkload = "request.resource.resource in ['deployments', 'statefulsets']";
  return {
    policy: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: objectMeta(settings, names.admissionPolicy),
      spec: {
        // A policy that cannot be evaluated denies: the operator is the one that must not slip through.
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            { apiGroups: ["apps"], apiVersions: ["v1"], operations, resources: ["deployments", "statefulsets"] },
            { apiGroups: [""], apiVersions: ["v1"], operations, resources: ["services", "persistentvolumeclaims"] },
          ],
        },
        matchConditions: [
          { name: "operator-service-account", expression: `request.userInfo.username == '${username}'` },
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
            expression:
              "request.resource.resource == 'persistentvolumeclaims' || " +
              `(has(${target}.metadata.ownerReferences) && ${target}.metadata.ownerReferences.exists(r, ` +
              `r.apiVersion == '${instanceApiVersion}' && r.kind == '${instanceKind}' && ` +
              "has(r.controller) && r.controller))",
            message: `the myapp operator may only write workloads and Services controlled by a ${instanceKind}`,
            reason: "Forbidden",
          },
          {
            expression:
              `!(${isWorkload}) || request.operation == 'DELETE' || (` +
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
