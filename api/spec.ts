/**
 * The desired state of a MyAppInstance: the seed's replicas, image, port and storage, plus what the operator needs
 * to provision storage. This zod schema is the single source of the TS types, the CRD's `spec` schema (with its
 * `kubectl explain` texts and CEL rules) and every spec check in TS.
 */
import { z } from "zod";
import { chartSchema, chartValuesSchema } from "./chart.ts";
import { dns1123SubdomainPattern, maxDns1123SubdomainLength } from "./dns-names.ts";
import {
  imageNameLength,
  imageNamePattern,
  imageReferencePattern,
  maxImageNameLength,
  maxImageReferenceLength,
} from "./image-reference.ts";
import { parseQuantity, unsignedQuantityPattern } from "./quantity.ts";

/** Most replicas: int32, the limit of Deployment, StatefulSet and the scale subresource alike. */
export const maxReplicas = 2_147_483_647;

/** Replicas when the spec leaves them out. */
export const defaultReplicas = 1;

/** Container port when the spec leaves it out. */
export const defaultPort = 8080;

/** Longest storage quantity string; it also keeps the CEL rules' cost estimate small. */
export const maxStorageLength = 64;

/** What happens to an instance's volumes when the instance is deleted. */
export const storageReclaimPolicies = ["Retain", "Delete"] as const;

/** One of {@link storageReclaimPolicies}. */
export type StorageReclaimPolicy = (typeof storageReclaimPolicies)[number];

/** Volumes outlive their instance unless the user asked otherwise: no implicit deletion of user data. */
export const defaultStorageReclaimPolicy: StorageReclaimPolicy = "Retain";

/** What each field allows, in words: the error text of every check on that field, at every layer that can. */
export const specRules = {
  replicas: `must be an integer from 0 to ${maxReplicas}`,
  image:
    "must be an OCI image reference [registry[:port]/]repository[:tag][@digest] with a lower-case repository " +
    `path, such as nginx:1.27 or registry.example.com:5000/team/app@sha256:<64 hex digits>, at most ${maxImageReferenceLength} characters`,
  imageNameLength: `must have a repository name (registry and path, before :tag and @digest) of at most ${maxImageNameLength} characters`,
  port: "must be an integer from 1 to 65535",
  storage: `must be a positive Kubernetes quantity such as 1Gi, 500Mi or 10G, at most ${maxStorageLength} characters`,
  storageClassName: `must be a StorageClass name (lower-case letters, digits, '-' and '.'), at most ${maxDns1123SubdomainLength} characters`,
  storageReclaimPolicy: `must be one of ${storageReclaimPolicies.join(", ")}`,
  storageClassNameNeedsStorage: "needs spec.storage: without storage there is no volume",
  storageNotRemovable: "may not be removed once set: the volumes exist and would be orphaned",
  storageClassImmutable: "may not change once spec.storage is set: volumes keep the class they were provisioned with",
} as const;

/** One entry of the CRD's `x-kubernetes-validations`. */
interface CelRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly fieldPath?: string;
  readonly reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired";
}

// CEL rules: what a plain schema cannot say. Each has a TS twin (below, or in transitions.ts) with the same verdict.
const storageRules: CelRule[] = [
  {
    // The pattern already rejects non-quantities; guarding with isQuantity keeps CEL from adding a second error.
    rule: "!isQuantity(self) || quantity(self).isGreaterThan(quantity('0'))",
    message: `spec.storage ${specRules.storage}`,
  },
  {
    rule: "!isQuantity(self) || !isQuantity(oldSelf) || quantity(self).compareTo(quantity(oldSelf)) >= 0",
    messageExpression: "'spec.storage may grow but not shrink: was ' + oldSelf + ', now ' + self",
    reason: "FieldValueForbidden",
  },
];

const specObjectRules: CelRule[] = [
  {
    rule: "has(self.storage) || !has(self.storageClassName)",
    message: `spec.storageClassName ${specRules.storageClassNameNeedsStorage}`,
    fieldPath: ".storageClassName",
  },
  {
    rule: "!has(oldSelf.storage) || has(self.storage)",
    message: `spec.storage ${specRules.storageNotRemovable}`,
    fieldPath: ".storage",
    reason: "FieldValueForbidden",
  },
  {
    rule:
      "!has(oldSelf.storage) || (has(self.storageClassName) ? has(oldSelf.storageClassName) && " +
      "self.storageClassName == oldSelf.storageClassName : !has(oldSelf.storageClassName))",
    message: `spec.storageClassName ${specRules.storageClassImmutable}`,
    fieldPath: ".storageClassName",
    reason: "FieldValueForbidden",
  },
];

const storageSchema = z
  .string({ error: specRules.storage })
  .max(maxStorageLength, { error: specRules.storage })
  .regex(new RegExp(unsignedQuantityPattern), { error: specRules.storage })
  .refine((text) => (parseQuantity(text)?.nanos ?? 1n) > 0n, { error: specRules.storage })
  .meta({
    description:
      "Size of the persistent volume each replica gets, as a Kubernetes quantity such as 1Gi, 500Mi or 10G. " +
      "Without it the application has no persistent volume. It may grow but never shrink, and once set it " +
      "cannot be removed.",
    "x-kubernetes-validations": storageRules,
  });

/** The spec schema. Unknown fields are errors, as with the apiserver's strict field validation. */
export const myAppInstanceSpecSchema = z
  .strictObject(
    {
      replicas: z
        .int({ error: specRules.replicas })
        .min(0, { error: specRules.replicas })
        .max(maxReplicas, { error: specRules.replicas })
        .default(defaultReplicas)
        .meta({
          description:
            `Number of pods to run, from 0 to ${maxReplicas}; 0 stops the application and keeps its volumes. ` +
            `Defaults to ${defaultReplicas}. The scale subresource writes this field, so ` +
            "`kubectl scale myappinstance/NAME --replicas=N` works.",
        }),
      image: z
        .string({ error: specRules.image })
        .max(maxImageReferenceLength, { error: specRules.image })
        .regex(new RegExp(imageReferencePattern), { error: specRules.image })
        .refine((image) => imageNameLength(image) <= maxImageNameLength, { error: specRules.imageNameLength })
        .meta({
          description:
            "Container image to run, as an OCI reference [registry[:port]/]repository[:tag][@digest], for " +
            "example nginx:1.27 or registry.example.com:5000/team/app@sha256:<64 hex digits>. The repository " +
            `path is lower case; the name (registry and path) has at most ${maxImageNameLength} characters, the ` +
            `whole reference at most ${maxImageReferenceLength}. Changing it rolls the pods out; status.image ` +
            "shows it once every replica runs it.",
          "x-kubernetes-validations": [
            {
              rule: `size(self.find('${imageNamePattern}')) <= ${maxImageNameLength}`,
              message: `spec.image ${specRules.imageNameLength}`,
            },
          ] satisfies CelRule[],
        }),
      port: z
        .int({ error: specRules.port })
        .min(1, { error: specRules.port })
        .max(65535, { error: specRules.port })
        .default(defaultPort)
        .meta({
          description:
            "TCP port the container listens on; the Service exposes the same port. From 1 to 65535. " +
            `Defaults to ${defaultPort}.`,
        }),
      storage: storageSchema.optional(),
      storageClassName: z
        .string({ error: specRules.storageClassName })
        .max(maxDns1123SubdomainLength, { error: specRules.storageClassName })
        .regex(new RegExp(dns1123SubdomainPattern), { error: specRules.storageClassName })
        .meta({
          description:
            "StorageClass of the volumes; needs storage. Leave it out to use the cluster's default class. It " +
            "cannot change once storage is set, because volumes keep the class they were provisioned with.",
        })
        .optional(),
      storageReclaimPolicy: z
        .enum(storageReclaimPolicies, { error: specRules.storageReclaimPolicy })
        .default(defaultStorageReclaimPolicy)
        .meta({
          description:
            "What happens to the volumes when the MyAppInstance is deleted: Retain keeps them (the default, so " +
            "no data is lost by accident); Delete removes them with the instance.",
        }),
      chart: chartSchema.optional(),
      values: chartValuesSchema.optional(),
    },
    { error: (issue) => (issue.code === "invalid_type" ? "must be an object" : undefined) },
  )
  .meta({
    description:
      "Desired state: which image to run, how many replicas, on which port, and optionally a persistent " +
      "volume per replica.",
    "x-kubernetes-validations": specObjectRules,
  })
  .superRefine(
    (spec, ctx) => {
      // `when` below runs this even when other fields failed, as the apiserver runs CEL next to pattern errors;
      // so read the raw value defensively.
      const raw: unknown = spec;
      if (typeof raw !== "object" || raw === null) return;
      if ("storageClassName" in raw && !("storage" in raw)) {
        ctx.addIssue({ code: "custom", path: ["storageClassName"], message: specRules.storageClassNameNeedsStorage });
      }
    },
    { when: () => true },
  );

/** The spec as stored: defaults applied. */
export type MyAppInstanceSpec = z.output<typeof myAppInstanceSpecSchema>;

/** The spec as written by a user: defaulted fields may be left out. */
export type MyAppInstanceSpecInput = z.input<typeof myAppInstanceSpecSchema>;
