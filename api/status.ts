/**
 * The observed state of a MyAppInstance, written only by the operator through the status subresource. Phase is
 * a summary for people (`kubectl get` prints it); machines read the conditions.
 */
import * as z from "zod";
import { maxServiceEndpointLength } from "./child-names.ts";
import { conditionSchema, maxConditionMessageLength } from "./condition-schema.ts";
import { maxImageReferenceLength } from "./image-reference.ts";
import { maxReplicas } from "./spec.ts";
import { boundedText } from "./text.ts";

/** Lifecycle phases, in the order an instance usually meets them (Degraded and Deleting can come at any time). */
export const phases = ["Pending", "Progressing", "Running", "Degraded", "Deleting"] as const;

/** One of {@link phases}. */
export type Phase = (typeof phases)[number];

const replicaCount = z.int().min(0).max(maxReplicas);

/** The longest reconcile request (annotation value) the status echoes in lastHandledReconcileAt. */
export const maxReconcileRequestLength = 256;

/** The longest status.message: a condition's message, which it repeats. */
export const maxStatusMessageLength = maxConditionMessageLength;

/** The longest status.chartUsage.storage: a quantity such as `120Gi`. */
export const maxChartUsageStorageLength = 64;

/** The longest status.selector. */
export const maxStatusSelectorLength = 4096;

/**
 * The most conditions a status may hold. The operator writes five types (Ready, Progressing, Degraded, and
 * kstatus's Reconciling and Stalled); the rest is room for another controller's or tool's own conditions (a
 * policy engine, a progressive-delivery tool). Without a bound, whoever may write the status subresource could
 * make each instance as large as etcd allows (~1.5 MiB), and every watcher hold it.
 */
export const maxConditions = 16;

/** The status schema. Every field is optional: an instance the operator has not seen yet has no status. */
export const myAppInstanceStatusSchema = z
  .strictObject({
    conditions: z
      .array(conditionSchema)
      .max(maxConditions, { error: `must have at most ${maxConditions} items` })
      .superRefine((conditions, ctx) => {
        // x-kubernetes-list-type: map makes the apiserver reject a second entry of a type; say so here too.
        const seen = new Set<string>();
        conditions.forEach((condition, index) => {
          if (seen.has(condition.type)) {
            ctx.addIssue({ code: "custom", path: [index], message: `duplicate condition type ${condition.type}` });
          }
          seen.add(condition.type);
        });
      })
      .meta({
        description:
          "Current state as conditions: Ready, Progressing and Degraded, plus kstatus's Reconciling and Stalled. " +
          `One entry per type, at most ${maxConditions}.`,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      })
      .optional(),
    observedGeneration: z
      .int()
      .min(0)
      .meta({ description: "metadata.generation of the last spec the operator acted on." })
      .optional(),
    replicas: replicaCount
      .meta({ description: "Pods that exist for this instance (the scale subresource reports it)." })
      .optional(),
    readyReplicas: replicaCount.meta({ description: "Pods that are ready to serve." }).optional(),
    phase: z
      .enum(phases)
      .meta({ description: "Summary of the lifecycle: Pending, Progressing, Running, Degraded or Deleting." })
      .optional(),
    image: boundedText(maxImageReferenceLength)
      .meta({ description: "The image every replica runs, once a rollout has completed." })
      .optional(),
    message: boundedText(maxStatusMessageLength)
      .meta({ description: "Human-readable summary of the current state." })
      .optional(),
    endpoint: boundedText(maxServiceEndpointLength)
      .meta({
        description:
          "Where the instance answers inside the cluster: its Service's DNS name and port, <service>.<namespace>.svc:<port>.",
      })
      .optional(),
    selector: boundedText(maxStatusSelectorLength)
      .meta({ description: "Label selector of the pods, in string form (used by the scale subresource and HPA)." })
      .optional(),
    chartUsage: z
      .strictObject({
        replicas: z
          .int()
          .min(0)
          .max(Number.MAX_SAFE_INTEGER)
          .meta({ description: "Pods the render may run: each workload's replicas, or its autoscaler's maxReplicas." }),
        storage: boundedText(maxChartUsageStorageLength).meta({
          description: "Volume storage the render claims: each StatefulSet's claim templates × its replicas.",
        }),
      })
      .meta({
        description:
          "What the chart's last applied render takes of its namespace's budget (the policy's namespace-max-* " +
          "flags and labels): a chart decides its workloads' sizes itself, so a chart instance counts this where " +
          "it is more than its spec asks for.",
      })
      .optional(),
    lastHandledReconcileAt: boundedText(maxReconcileRequestLength)
      .meta({
        description:
          "The value of the myapp.example.com/reconcile-requested-at annotation the operator last acted on: this " +
          "status answers that request.",
      })
      .optional(),
  })
  .meta({ description: "Observed state, written by the operator." });

/** The status as the operator writes it. */
export type MyAppInstanceStatus = z.output<typeof myAppInstanceStatusSchema>;
