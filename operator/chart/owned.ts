/**
 * Rendered objects as the operator applies them: in the instance's namespace, controlled by the instance, with the
 * labels that let the operator find them again (its child informers and the prune step). Pure.
 */
import type { RenderedObject } from "../../chart/index.ts";
import type { InstanceIdentity } from "../desired/index.ts";
import { controllerReference, labelKeys, managedBy } from "../desired/index.ts";
import { labelValue } from "../../api/index.ts";

/**
 * Label on every object a chart rendered for an instance: the instance's name. Prune lists by it (together with
 * the controller reference, so only objects the instance owns are ever deleted).
 */
export const chartInstanceLabel = "myapp.example.com/chart-instance";

/**
 * The object as the operator applies it: in the instance's namespace, controlled by the instance, labelled as
 * the operator's (`app.kubernetes.io/managed-by` is the operator, which keeps it up to date, not Helm) and with
 * {@link chartInstanceLabel}. Everything else is exactly what the chart rendered.
 */
export function ownedObject(object: RenderedObject, instance: InstanceIdentity): RenderedObject {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      namespace: instance.namespace,
      labels: {
        ...object.metadata.labels,
        [labelKeys.managedBy]: managedBy,
        [chartInstanceLabel]: labelValue(instance.name),
      },
      ownerReferences: [controllerReference(instance)],
    },
  };
}
