/**
 * The operator Deployment: restricted security context (passes Pod Security "restricted"), probes on the
 * operator's health endpoints, and leader election when it runs more than one replica.
 */
import type { DeploymentManifest } from "./manifest-types.ts";
import { commonLabels, objectMeta, operatorObjectNames, selectorLabels } from "./metadata.ts";
import { rendersMemoryMiB, scratchMiB } from "./chart-limits.ts";
import { reviewParseThreadHeapMiB } from "../chart/render-yaml-thread.ts";
import { chartSourcesCaPod } from "./chart-sources-ca.ts";
import { allocatorEnv, nodeOptionsFor } from "./node-heap.ts";
import { healthPort, livenessPath, metricsPort, readinessPath, webhookPort } from "./operator-endpoints.ts";
import { operatorFlags } from "./operator-flags.ts";
import type { OperatorSettings } from "./settings.ts";

/** The image's non-root user (distroless's "nonroot"; the Dockerfile creates it with this uid). */
export const operatorUid = 65532;
export const operatorContainerName = "operator";

/**
 * How long `pulumi up` waits for the operator Deployment to become available. pulumi-kubernetes awaits a
 * Deployment (no `pulumi.com/skipAwait` here) until its new pods are ready, and reports the pods' errors as it
 * waits, every 10 s (`ErrImagePull`, `ImagePullBackOff`, `CrashLoopBackOff` with the container's message); at
 * this deadline it fails with them. Its default is 10 minutes; an image that cannot be pulled or a container that
 * crashes shows within a minute, and a node pulling the ~70 MiB image and the operator's readiness take well under
 * one, so a few minutes leave room for a node to be added by an autoscaler without hiding a broken image for ten.
 */
export const operatorDeploymentTimeouts = { create: "5m", update: "5m" } as const;

/** The Deployment, or undefined when the operator runs outside the cluster. */
export function operatorDeployment(settings: OperatorSettings): DeploymentManifest | undefined {
  if (settings.operatorPlacement !== "in-cluster") return undefined;
  const names = operatorObjectNames(settings);
  // The heap leaves room for the helm renders that may run at once, each within its memory limit, and for the
  // webhooks' thread that parses large reviews.
  const reviewsMiB = settings.webhooks.enabled ? reviewParseThreadHeapMiB : 0;
  const nodeOptions = nodeOptionsFor(settings.resources, rendersMemoryMiB(settings) + reviewsMiB).join(" ");
  const ca = chartSourcesCaPod(settings);
  const podAnnotations = {
    ...settings.annotations,
    "kubectl.kubernetes.io/default-container": operatorContainerName,
    ...ca?.annotations,
  };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: objectMeta(settings, names.deployment, settings.namespace),
    spec: {
      replicas: settings.replicas,
      selector: { matchLabels: selectorLabels(settings) },
      // Without leader election two operators must never overlap, so a single replica is replaced, not rolled.
      strategy: settings.leaderElection
        ? { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } }
        : { type: "Recreate" },
      template: {
        metadata: { labels: commonLabels(settings), annotations: podAnnotations },
        spec: {
          serviceAccountName: names.serviceAccount,
          automountServiceAccountToken: true,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: operatorUid,
            runAsGroup: operatorUid,
            seccompProfile: { type: "RuntimeDefault" },
          },
          terminationGracePeriodSeconds: 30,
          ...(settings.replicas >= 2 ? { topologySpreadConstraints: [spreadAcrossNodes(settings)] } : {}),
          containers: [
            {
              name: operatorContainerName,
              image: settings.image,
              imagePullPolicy: settings.imagePullPolicy,
              args: operatorFlags(settings),
              env: [
                // Leader election identity and the operator's own namespace, from the downward API.
                { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                { name: "NODE_OPTIONS", value: nodeOptions },
                ...Object.entries(allocatorEnv).map(([name, value]) => ({ name, value })),
                ...(ca ? [ca.env] : []),
              ],
              ports: [
                { name: "metrics", containerPort: metricsPort, protocol: "TCP" },
                { name: "health", containerPort: healthPort, protocol: "TCP" },
                ...(settings.webhooks.enabled
                  ? [{ name: "webhook", containerPort: webhookPort, protocol: "TCP" }]
                  : []),
              ],
              livenessProbe: {
                httpGet: { path: livenessPath, port: "health" },
                initialDelaySeconds: 5,
                periodSeconds: 10,
                failureThreshold: 3,
              },
              readinessProbe: {
                httpGet: { path: readinessPath, port: "health" },
                periodSeconds: 5,
                failureThreshold: 3,
              },
              resources: settings.resources,
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
                seccompProfile: { type: "RuntimeDefault" },
              },
              // Node and libraries may write temp files, and each render its chart; the root filesystem is read-only.
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }, ...(ca ? [ca.volumeMount] : [])],
            },
          ],
          volumes: [{ name: "tmp", emptyDir: { sizeLimit: `${scratchMiB(settings)}Mi` } }, ...(ca ? [ca.volume] : [])],
        },
      },
    },
  };
}

function spreadAcrossNodes(settings: OperatorSettings) {
  // A preference, not a rule: a one-node cluster must still run every replica.
  return {
    maxSkew: 1,
    topologyKey: "kubernetes.io/hostname",
    whenUnsatisfiable: "ScheduleAnyway",
    labelSelector: { matchLabels: selectorLabels(settings) },
  };
}
