/** The Service of an instance. */
import { childLabels, selectorLabels } from "./labels.ts";
import { governingServiceName, serviceName } from "../../api/index.ts";
import type { DesiredInput, DesiredService } from "./objects.ts";
import { controllerReference } from "./owner.ts";
import { portName } from "./pod-template.ts";

/**
 * A ClusterIP Service on spec.port. It selects pods by the instance's fixed selector labels, so it keeps routing
 * while the instance moves between a Deployment and a StatefulSet (both run pods with the same labels).
 */
export function desiredService(instance: DesiredInput): DesiredService {
  const { metadata, spec } = instance;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: serviceName(metadata.name),
      namespace: metadata.namespace,
      labels: childLabels(metadata.name),
      ownerReferences: [controllerReference(metadata)],
    },
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(metadata.name),
      ports: [{ name: portName, port: spec.port, targetPort: spec.port, protocol: "TCP" }],
    },
  };
}

/**
 * The headless Service that governs the StatefulSet of an instance with storage: it gives each pod a stable DNS
 * name (`web-0.<name>.<namespace>.svc`), what a StatefulSet's `serviceName` is for. Not-ready pods are published
 * too, so replicas can find their peers while they start. Clients keep using the ClusterIP Service.
 */
export function desiredGoverningService(instance: DesiredInput): DesiredService {
  const { metadata, spec } = instance;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: governingServiceName(metadata.name),
      namespace: metadata.namespace,
      labels: childLabels(metadata.name),
      ownerReferences: [controllerReference(metadata)],
    },
    spec: {
      type: "ClusterIP",
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: selectorLabels(metadata.name),
      ports: [{ name: portName, port: spec.port, targetPort: spec.port, protocol: "TCP" }],
    },
  };
}
