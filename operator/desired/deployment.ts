/** The Deployment of an instance without storage. */
import { childLabels, selectorLabels } from "./labels.ts";
import { workloadName } from "../../api/index.ts";
import type { DesiredDeployment, DesiredInput } from "./objects.ts";
import { controllerReference } from "./owner.ts";
import { dataVolumeName, desiredPodTemplate } from "./pod-template.ts";

/**
 * The Deployment for an instance whose spec has no storage. /data is an emptyDir: scratch space that lives as
 * long as the pod. Strategy, revision history and progress deadline stay at the server defaults.
 */
export function desiredDeployment(instance: DesiredInput): DesiredDeployment {
  const { metadata, spec } = instance;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: workloadName(metadata.name),
      namespace: metadata.namespace,
      labels: childLabels(metadata.name),
      ownerReferences: [controllerReference(metadata)],
    },
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: selectorLabels(metadata.name) },
      template: desiredPodTemplate(instance, [{ name: dataVolumeName, emptyDir: {} }]),
    },
  };
}
