/**
 * The shape of one status condition: exactly `metav1.Condition`, with the same bounds and patterns that
 * controller-gen writes for it, so tools that read conditions (kstatus, `kubectl wait --for=condition=Ready`)
 * find what they expect.
 */
import * as z from "zod";
import { isDateTime } from "./date-time.ts";
import { boundedText } from "./text.ts";

/** The longest condition message: metav1.Condition's (32 KiB). */
export const maxConditionMessageLength = 32768;

/** Condition statuses, as in metav1.ConditionStatus. */
export const conditionStatuses = ["True", "False", "Unknown"] as const;

/** One of {@link conditionStatuses}. */
export type ConditionStatus = (typeof conditionStatuses)[number];

/**
 * The longest lastTransitionTime. metav1.Time writes 20 characters (`2006-01-02T15:04:05Z`), and the longest
 * RFC 3339 time of any use, with nanoseconds and an offset, has 35; but `format: date-time` alone bounds nothing: the
 * apiserver's check takes a fraction of any length and ignores whatever follows a second "t", so without
 * `maxLength` the field held as much text as the object.
 */
export const maxConditionTimeLength = 64;

// From k8s.io/apimachinery/pkg/apis/meta/v1 Condition's kubebuilder markers, groups made non-capturing.
const conditionTypePattern =
  "^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\\/)?(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";
const conditionReasonPattern = "^[A-Za-z](?:[A-Za-z0-9_,:]*[A-Za-z0-9_])?$";

/** The schema of one condition. */
export const conditionSchema = z
  .strictObject({
    type: z
      .string()
      .max(316)
      .regex(new RegExp(conditionTypePattern))
      .meta({ description: "Type of the condition in CamelCase, such as Ready, Progressing or Degraded." }),
    status: z.enum(conditionStatuses).meta({ description: "Status of the condition: True, False or Unknown." }),
    observedGeneration: z
      .int()
      .min(0)
      .meta({ description: "metadata.generation of the spec this condition was computed from." })
      .optional(),
    lastTransitionTime: boundedText(maxConditionTimeLength)
      .refine(isDateTime, { error: "must be an RFC 3339 date-time such as 2025-04-01T12:00:00Z" })
      .meta({
        description: "When the status last changed (not when the condition was last written), RFC 3339.",
        format: "date-time",
      }),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(new RegExp(conditionReasonPattern))
      .meta({ description: "Machine-readable CamelCase reason for the last transition, such as ImagePullFailed." }),
    message: boundedText(maxConditionMessageLength).meta({
      description: "Human-readable details about the last transition.",
    }),
  })
  .meta({ description: "One aspect of the instance's state, in the metav1.Condition shape." });

/** A status condition, as `metav1.Condition`. */
export type Condition = z.output<typeof conditionSchema>;
