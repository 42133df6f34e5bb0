/**
 * The desired state of a MyAppInstance: replicas, image, port and storage, plus what the operator needs
 * to provision storage. This zod schema is the single source of the TS types, the CRD's `spec` schema (with its
 * `kubectl explain` texts and CEL rules) and every spec check in TS.
 */
import * as z from "zod";
import { celString } from "./cel-string.ts";
import { chartRules, chartSchema, chartValuesSchema } from "./chart.ts";
import { dns1123SubdomainPattern, maxDns1123SubdomainLength } from "./dns-names.ts";
import {
  imageNameLength,
  imageNamePattern,
  imageReferencePattern,
  maxImageNameLength,
  maxImageReferenceLength,
} from "./image-reference.ts";
import { compareQuantities, parseQuantity, unsignedQuantityPattern, wholeBytesQuantityPattern } from "./quantity.ts";
import { patternMessageKey } from "./structural.ts";

/** Most replicas: int32, the limit of Deployment, StatefulSet and the scale subresource alike. */
export const maxReplicas = 2_147_483_647;

/** Replicas when the spec leaves them out. */
export const defaultReplicas = 1;

/** Container port when the spec leaves it out. */
export const defaultPort = 8080;

/** Longest storage quantity string; it also keeps the CEL rules' cost estimate small. */
export const maxStorageLength = 64;

/**
 * Largest storage size: 1Ei (2^60 bytes), far beyond any volume, and below the 2^63-1 bytes at which the
 * apiserver silently caps a quantity (a claim would then be smaller than its spec).
 */
export const maxStorage = "1Ei";

/** {@link maxStorage} in bytes. */
export const maxStorageBytes = 2n ** 60n;

/** Longest CPU or memory quantity string; it keeps the CEL rules' cost estimate small. */
export const maxResourceQuantityLength = 32;

/** The compute resources a container may request and be limited to. */
export const computeResources = ["cpu", "memory"] as const;

/**
 * Requests and limits when the spec leaves them out: a small web app's needs. No CPU limit by default, because a
 * CPU limit throttles a busy app although the node has CPU to spare; memory is limited, because a leak must not
 * starve the node. A limit set below a default request lowers the request to the limit.
 */
export const defaultResources = {
  requests: { cpu: "100m", memory: "128Mi" },
  limits: { memory: "512Mi" },
} as const;

/**
 * How locked-down the app's pods are. `Restricted` (the default) meets the Pod Security "restricted" level: a
 * non-root user, no privilege escalation, every capability dropped, the RuntimeDefault seccomp profile.
 * `Baseline` sets none of this, for images that must start as root; such pods meet the "baseline" level only,
 * and are rejected in namespaces that enforce "restricted".
 */
export const podSecurityLevels = ["Restricted", "Baseline"] as const;

/** One of {@link podSecurityLevels}. */
export type PodSecurityLevel = (typeof podSecurityLevels)[number];

/** Pods are restricted unless the instance opts out. */
export const defaultPodSecurityLevel: PodSecurityLevel = "Restricted";

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
  storage:
    `must be a whole number of bytes from 1 to ${maxStorage}: digits without a fraction or leading zero, then ` +
    "optionally a suffix Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or an exponent such as e9, e.g. 10Gi, 500M or " +
    `1536Mi (not 1.5Gi), at most ${maxStorageLength} characters`,
  resourceQuantity: `must be a Kubernetes quantity such as 250m, 0.5 or 2 (cpu) or 256Mi (memory), at most ${maxResourceQuantityLength} characters`,
  requestAboveLimit: "must not be greater than the limit of the same resource",
  podSecurityLevel: `must be one of ${podSecurityLevels.join(", ")}`,
  storageClassName: `must be a StorageClass name (lower-case letters, digits, '-' and '.'), at most ${maxDns1123SubdomainLength} characters`,
  storageReclaimPolicy: `must be one of ${storageReclaimPolicies.join(", ")}`,
  storageClassNameNeedsStorage: "needs spec.storage: without storage there is no volume",
  storageNotRemovable: "may not be removed once set: the volumes exist and would be orphaned",
  storageClassImmutable: "may not change once spec.storage is set: volumes keep the class they were provisioned with",
} as const;

/** How a storageClassName change words a side without a class: the volumes were, or would be, on the default class. */
const storageClassUnset = {
  was: "unset (the volumes use the cluster's default class)",
  now: "unset (the cluster's default class)",
} as const;

/**
 * The storageClassName transition rule's message, naming the old and the new value (either may be unset): the
 * words of the CRD's CEL messageExpression (below) and of `checkSpecTransition`, so preview and apiserver agree.
 */
export function storageClassChangeMessage(was: string | undefined, now: string | undefined): string {
  return `${specRules.storageClassImmutable}; was ${was ?? storageClassUnset.was}, now ${now ?? storageClassUnset.now}`;
}

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
    // The pattern already makes it at least 1 byte and exact; only the maximum needs CEL. Guarding with
    // isQuantity keeps CEL from adding a second error where the pattern failed.
    rule: `!isQuantity(self) || quantity(self).compareTo(quantity('${maxStorage}')) <= 0`,
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
    // Names both sides: "was unset" (volumes on the default class) is the case a newcomer does not see coming.
    messageExpression:
      `${celString(`spec.storageClassName ${specRules.storageClassImmutable}; was `)} + ` +
      `(has(oldSelf.storageClassName) ? oldSelf.storageClassName : ${celString(storageClassUnset.was)}) + ` +
      `', now ' + (has(self.storageClassName) ? self.storageClassName : ${celString(storageClassUnset.now)})`,
    fieldPath: ".storageClassName",
    reason: "FieldValueForbidden",
  },
  {
    // A digest in spec.image reaches a chart or the instance is refused: never dropped (see defaultValuePaths).
    rule:
      "!has(self.chart) || !has(self.chart.valuePaths) || !has(self.chart.valuePaths.imageDigest) || " +
      "self.chart.valuePaths.imageDigest != '' || !self.image.contains('@')",
    message: `spec.chart.valuePaths.imageDigest ${chartRules.imageDigestUnmapped}`,
    fieldPath: ".chart.valuePaths.imageDigest",
  },
];

const storageSchema = z
  .string({ error: specRules.storage })
  .max(maxStorageLength, { error: specRules.storage })
  .regex(new RegExp(wholeBytesQuantityPattern), { error: specRules.storage })
  .refine((text) => (parseQuantity(text)?.nanos ?? 0n) <= maxStorageBytes * 10n ** 9n, { error: specRules.storage })
  .meta({
    description:
      "Size of the persistent volume each replica gets, as a whole number of bytes with an optional suffix or " +
      `exponent, such as 10Gi, 500M or 1536Mi (no fractions), from 1 byte to ${maxStorage}. Without it the ` +
      "application has no persistent volume. It may grow but never shrink, and once set it cannot be removed.",
    [patternMessageKey]: `spec.storage ${specRules.storage}`,
    "x-kubernetes-validations": storageRules,
  });

const resourceQuantitySchema = z
  .string({ error: specRules.resourceQuantity })
  .max(maxResourceQuantityLength, { error: specRules.resourceQuantity })
  .regex(new RegExp(unsignedQuantityPattern), { error: specRules.resourceQuantity });

function resourceListSchema(what: "requests" | "limits") {
  const description =
    what === "requests"
      ? "What the scheduler reserves for the app's container. Defaults: " +
        `cpu ${defaultResources.requests.cpu}, memory ${defaultResources.requests.memory}; a default request ` +
        "above a limit you set is lowered to that limit."
      : `The most the app's container may use. Default: memory ${defaultResources.limits.memory}, no cpu limit ` +
        "(a CPU limit throttles the app even when the node has CPU to spare).";
  return z
    .strictObject(
      {
        cpu: resourceQuantitySchema
          .meta({
            description: "CPU, in cores: 250m, 0.5, 2.",
            [patternMessageKey]: `spec.resources.${what}.cpu ${specRules.resourceQuantity}`,
          })
          .optional(),
        memory: resourceQuantitySchema
          .meta({
            description: "Memory, in bytes: 256Mi, 1Gi.",
            [patternMessageKey]: `spec.resources.${what}.memory ${specRules.resourceQuantity}`,
          })
          .optional(),
      },
      { error: (issue) => (issue.code === "invalid_type" ? "must be an object" : undefined) },
    )
    .meta({ description });
}

// A request above its limit makes an invalid pod template; say so here, not as a rejected child later.
const requestWithinLimitRules: CelRule[] = computeResources.map((resource) => ({
  rule:
    `!has(self.requests) || !has(self.limits) || !has(self.requests.${resource}) || ` +
    `!has(self.limits.${resource}) || !isQuantity(self.requests.${resource}) || ` +
    `!isQuantity(self.limits.${resource}) || ` +
    `quantity(self.requests.${resource}).compareTo(quantity(self.limits.${resource})) <= 0`,
  message: `spec.resources.requests.${resource} ${specRules.requestAboveLimit}`,
  fieldPath: `.requests.${resource}`,
}));

const resourcesSchema = z
  .strictObject(
    { requests: resourceListSchema("requests").optional(), limits: resourceListSchema("limits").optional() },
    { error: (issue) => (issue.code === "invalid_type" ? "must be an object" : undefined) },
  )
  .meta({
    description:
      "CPU and memory requests and limits of the app's container. What you leave out gets the default: " +
      `requests cpu ${defaultResources.requests.cpu} and memory ${defaultResources.requests.memory}, limit memory ` +
      `${defaultResources.limits.memory}.`,
    "x-kubernetes-validations": requestWithinLimitRules,
  })
  .superRefine(
    (resources, ctx) => {
      // Runs even where a quantity failed its pattern, as the apiserver runs CEL next to pattern errors.
      const raw = resources as { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
      for (const resource of computeResources) {
        const request = raw.requests?.[resource];
        const limit = raw.limits?.[resource];
        if (typeof request !== "string" || typeof limit !== "string") continue;
        const [requested, limited] = [parseQuantity(request), parseQuantity(limit)];
        if (requested && limited && compareQuantities(requested, limited) > 0) {
          ctx.addIssue({ code: "custom", path: ["requests", resource], message: specRules.requestAboveLimit });
        }
      }
    },
    { when: () => true },
  );

/** The spec schema. Unknown fields are errors, as with the apiserver's strict field validation. */
/**
 * A number field's rule, and what was given when it is not a number at all: `pulumi preview` shows a value as
 * `{3}` whether it is 3 or "3" (a config value read with `config.get`, say), so the message says which.
 */
function numberRule(rule: string): (issue: { readonly input?: unknown }) => string {
  return ({ input }) => {
    if (input === undefined || typeof input === "number") return rule;
    const given =
      typeof input === "string"
        ? `the string ${JSON.stringify(input.slice(0, 32))}`
        : input === null
          ? "null"
          : `a ${Array.isArray(input) ? "list" : typeof input}`;
    return `${rule}, not ${given}`;
  };
}

export const myAppInstanceSpecSchema = z
  .strictObject(
    {
      replicas: z
        .int({ error: numberRule(specRules.replicas) })
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
          [patternMessageKey]: `spec.image ${specRules.image}`,
          "x-kubernetes-validations": [
            {
              rule: `size(self.find('${imageNamePattern}')) <= ${maxImageNameLength}`,
              message: `spec.image ${specRules.imageNameLength}`,
            },
          ] satisfies CelRule[],
        }),
      port: z
        .int({ error: numberRule(specRules.port) })
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
          [patternMessageKey]: `spec.storageClassName ${specRules.storageClassName}`,
        })
        .optional(),
      storageReclaimPolicy: z
        .enum(storageReclaimPolicies, { error: specRules.storageReclaimPolicy })
        .default(defaultStorageReclaimPolicy)
        .meta({
          description:
            "What happens to the volumes when the MyAppInstance is deleted: Retain keeps them (the default, so " +
            "no data is lost by accident); Delete removes those this instance made with it (volumes an earlier " +
            "instance of the same name kept stay).",
        }),
      chart: chartSchema.optional(),
      values: chartValuesSchema.optional(),
      resources: resourcesSchema.optional(),
      podSecurityLevel: z
        .enum(podSecurityLevels, { error: specRules.podSecurityLevel })
        .meta({
          description:
            "Restricted (what leaving it out means) runs the app's pods as Pod Security's restricted level asks: a non-root " +
            "user, no privilege escalation, all capabilities dropped, the RuntimeDefault seccomp profile. Baseline " +
            "sets none of this, for images that must start as root; such pods are rejected in namespaces that " +
            "enforce the restricted level.",
        })
        // Optional rather than defaulted: absent means Restricted, and stored instances stay as they were.
        .optional(),
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
      if (digestUnmapped(raw)) {
        ctx.addIssue({
          code: "custom",
          path: ["chart", "valuePaths", "imageDigest"],
          message: chartRules.imageDigestUnmapped,
        });
      }
    },
    { when: () => true },
  );

/** The CEL rule's twin: `spec.image` has a digest and `spec.chart.valuePaths.imageDigest` is "". */
function digestUnmapped(raw: object): boolean {
  const spec = raw as { image?: unknown; chart?: { valuePaths?: { imageDigest?: unknown } } };
  return typeof spec.image === "string" && spec.image.includes("@") && spec.chart?.valuePaths?.imageDigest === "";
}

/** The spec as stored: defaults applied. */
export type MyAppInstanceSpec = z.output<typeof myAppInstanceSpecSchema>;

/** The spec as written by a user: defaulted fields may be left out. */
export type MyAppInstanceSpecInput = z.input<typeof myAppInstanceSpecSchema>;
