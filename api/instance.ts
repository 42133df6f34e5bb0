/**
 * A whole MyAppInstance object, as written to and read from the apiserver.
 */
import * as z from "zod";
import { apiVersion, kind } from "./names.ts";
import { objectMetaSchema } from "./object-meta.ts";
import { myAppInstanceSpecSchema } from "./spec.ts";
import { myAppInstanceStatusSchema } from "./status.ts";

/** The schema of the whole object. `spec` is required, `status` belongs to the operator. */
export const myAppInstanceSchema = z
  .strictObject({
    apiVersion: z.literal(apiVersion, { error: `must be ${apiVersion}` }),
    kind: z.literal(kind, { error: `must be ${kind}` }),
    metadata: objectMetaSchema,
    spec: myAppInstanceSpecSchema,
    status: myAppInstanceStatusSchema.optional(),
  })
  .meta({
    description:
      "MyAppInstance runs one containerized application: its pods, a Service on its port and, optionally, a " +
      "persistent volume per replica. The operator reports progress in status.conditions.",
  });

/** A MyAppInstance with defaults applied, as the apiserver returns it. */
export type MyAppInstanceObject = z.output<typeof myAppInstanceSchema>;

/** A MyAppInstance as a user writes it: defaulted spec fields may be left out. */
export type MyAppInstanceInput = z.input<typeof myAppInstanceSchema>;
