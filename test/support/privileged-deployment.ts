/**
 * The Deployment a leaked operator token must not be able to create: privileged, host namespaces, the host's root
 * and a Secret mounted (RBAC alone would let a cluster-wide operator's token create it; the admission policy refuses).
 */
import type { KubeObject } from "../../kube/index.ts";

export function privilegedDeployment(namespace: string, metadata: Record<string, unknown> = {}): KubeObject {
  const labels = { app: "pwn" };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "pwn", namespace, ...metadata },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          hostPID: true,
          hostNetwork: true,
          containers: [
            {
              name: "pwn",
              image: "registry.example/pwn:1",
              securityContext: { privileged: true },
              volumeMounts: [
                { name: "host", mountPath: "/host" },
                { name: "token", mountPath: "/token" },
              ],
            },
          ],
          volumes: [
            { name: "host", hostPath: { path: "/" } },
            { name: "token", secret: { secretName: "any" } },
          ],
        },
      },
    },
  } as KubeObject;
}
