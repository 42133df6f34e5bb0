/**
 * The recommended app.kubernetes.io labels on every child. The selector is a fixed subset (name + instance):
 * a Deployment's selector is immutable, and the Service must match the pods of both workload kinds while an
 * instance moves from one to the other.
 */
import { appName, instanceLabelValue, labelKeys, managedBy } from "../../api/index.ts";
import { byCodeUnits } from "../../api/code-unit-order.ts";

export { appName, labelKeys, managedBy };

/** `app.kubernetes.io/component` of the application's pods and their workload and Service. */
export const component = "server";

/** The labels that select an instance's pods; they never change for the life of the instance. */
export function selectorLabels(instanceName: string): Record<string, string> {
  return { [labelKeys.name]: appName, [labelKeys.instance]: instanceLabelValue(instanceName) };
}

/** The labels every child (and every pod and volume claim) carries. */
export function childLabels(instanceName: string): Record<string, string> {
  return {
    ...selectorLabels(instanceName),
    [labelKeys.managedBy]: managedBy,
    [labelKeys.component]: component,
  };
}

/** The selector in string form, for status.selector (the scale subresource) and list calls. */
export function selectorString(instanceName: string): string {
  return Object.entries(selectorLabels(instanceName))
    .sort(([a], [b]) => byCodeUnits(a, b))
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
}
