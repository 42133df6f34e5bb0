/**
 * The recommended app.kubernetes.io labels the operator puts on every child of an instance (workloads, Services,
 * pods, volume claims). Part of the API: whoever selects an instance's children (the operator, the Pulumi side's
 * checks, a user's `kubectl get -l`) selects on these.
 */
import { labelValue } from "./child-names.ts";

/** `app.kubernetes.io/name` of everything this operator runs. */
export const appName = "myapp";

/** `app.kubernetes.io/managed-by` of every child. */
export const managedBy = "myapp-operator";

export const labelKeys = {
  name: "app.kubernetes.io/name",
  instance: "app.kubernetes.io/instance",
  managedBy: "app.kubernetes.io/managed-by",
  component: "app.kubernetes.io/component",
} as const;

/** `app.kubernetes.io/instance` of the children of the instance `instanceName`. */
export function instanceLabelValue(instanceName: string): string {
  return labelValue(instanceName);
}

/** A label selector for every child this operator made, of any instance, in string form. */
export const allChildrenSelector = `${labelKeys.managedBy}=${managedBy},${labelKeys.name}=${appName}`;
