/** Instances for the builder tests. */
import type { MyAppInstanceSpec } from "../../../api/index.ts";
import type { DesiredInput } from "../../../operator/desired/index.ts";

/** An instance `web` in namespace `shop` with the given spec fields over sensible defaults. */
export function instance(spec: Partial<MyAppInstanceSpec> = {}, name = "web"): DesiredInput {
  return {
    metadata: { name, namespace: "shop", uid: "8d0e6a52-0000-4000-8000-000000000001" },
    spec: { replicas: 3, image: "nginx:1.27", port: 8080, storageReclaimPolicy: "Retain", ...spec },
  };
}

export const owner = {
  apiVersion: "example.com/v1",
  kind: "MyAppInstance",
  name: "web",
  uid: "8d0e6a52-0000-4000-8000-000000000001",
  controller: true,
  blockOwnerDeletion: true,
};

export const labels = {
  "app.kubernetes.io/name": "myapp",
  "app.kubernetes.io/instance": "web",
  "app.kubernetes.io/managed-by": "myapp-operator",
  "app.kubernetes.io/component": "server",
};

export const selector = { "app.kubernetes.io/name": "myapp", "app.kubernetes.io/instance": "web" };

/** The Pod Security "restricted" settings every pod gets unless its instance opts out. */
export const restrictedPod = { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } };
export const restrictedContainer = { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } };

/** The documented defaults: requests 100m cpu and 128Mi memory, a 512Mi memory limit, no cpu limit. */
export const defaultContainerResources = {
  requests: { cpu: "100m", memory: "128Mi" },
  limits: { memory: "512Mi" },
};
