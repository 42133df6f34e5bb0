/**
 * What tenants may do with instances, through Kubernetes' default user-facing roles: a team is usually given `edit`
 * (or `admin`) in its namespace, and `view` to read. Two ClusterRoles carry the aggregation labels, so the
 * apiserver's aggregation controller adds their rules to those roles: `admin` and `edit` create, change, delete and
 * scale instances; `view` reads them. Never their status: it is the operator's word (a tenant who writes it can
 * mark an instance Ready early or count less against a budget), so only the operator's own ClusterRole grants it.
 * The rules are the same whichever platform installs them, so two platforms on a cluster grant nothing twice.
 */
import { group, plural } from "../api/index.ts";
import type { ClusterRoleManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";

const aggregateTo = (...roles: string[]) =>
  Object.fromEntries(roles.map((role) => [`rbac.authorization.k8s.io/aggregate-to-${role}`, "true"]));

/** The two ClusterRoles, or none when the platform grants instance rights itself (`tenantRoles: false`). */
export function tenantClusterRoles(settings: OperatorSettings): ClusterRoleManifest[] {
  if (!settings.tenantRoles) return [];
  const names = operatorObjectNames(settings);
  const role = (name: string, labels: Record<string, string>, rules: ClusterRoleManifest["rules"]) => {
    const metadata = objectMeta(settings, name);
    return {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { ...metadata, labels: { ...metadata.labels, ...labels } },
      rules,
    } satisfies ClusterRoleManifest;
  };
  return [
    role(names.tenantEditRole, aggregateTo("admin", "edit"), [
      {
        apiGroups: [group],
        resources: [plural],
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      },
      { apiGroups: [group], resources: [`${plural}/scale`], verbs: ["get", "patch", "update"] },
    ]),
    role(names.tenantViewRole, aggregateTo("view"), [
      {
        apiGroups: [group],
        resources: [plural, `${plural}/scale`, `${plural}/status`],
        verbs: ["get", "list", "watch"],
      },
    ]),
  ];
}
