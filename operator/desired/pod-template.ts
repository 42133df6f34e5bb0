/** The pod template both workload kinds run: one container, the instance's image and port, data at /data. */
import { defaultPodSecurityLevel, defaultResources } from "../../api/index.ts";
import { childLabels } from "./labels.ts";
import type { DesiredInput, PodTemplate, Volume } from "./objects.ts";
import { desiredResources } from "./resources.ts";
import { desiredSecurityContext } from "./security-context.ts";

/** Name of the application's container. */
export const containerName = "app";

/** Name of the container port and of the Service port. */
export const portName = "app";

/** Name of the data volume: an emptyDir in a Deployment, a claim per replica in a StatefulSet. */
export const dataVolumeName = "data";

/** Where the data volume is mounted in the app's container. */
export const dataMountPath = "/data";

/**
 * The pod template. `volumes` are the workload's own (a Deployment's emptyDir); a StatefulSet passes none, its
 * volume comes from the claim template of the same name. The readiness probe makes "Ready" mean "accepts TCP
 * connections on spec.port", which is what the Service routes to. Security settings and resources come from the
 * spec, with secure defaults (see security-context.ts and resources.ts).
 */
export function desiredPodTemplate(instance: DesiredInput, volumes?: readonly Volume[]): PodTemplate {
  const { spec, metadata } = instance;
  const security = desiredSecurityContext(spec.podSecurityLevel ?? defaultPodSecurityLevel);
  return {
    metadata: { labels: childLabels(metadata.name) },
    spec: {
      securityContext: security.pod,
      containers: [
        {
          name: containerName,
          image: spec.image,
          ports: [{ name: portName, containerPort: spec.port, protocol: "TCP" }],
          volumeMounts: [{ name: dataVolumeName, mountPath: dataMountPath }],
          readinessProbe: { tcpSocket: { port: portName } },
          resources: desiredResources(spec.resources, defaultResources),
          securityContext: security.container,
        },
      ],
      ...(volumes ? { volumes } : {}),
    },
  };
}
