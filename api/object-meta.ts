/**
 * `metadata` of a MyAppInstance: the standard ObjectMeta fields, checked as far as the apiserver checks them on
 * create, so that zod and the apiserver agree on names and labels too. Strict, like the apiserver's field
 * validation: a misspelt `metadata.lables` is an error, not a silent no-op.
 */
import * as z from "zod";
import {
  dns1123LabelPattern,
  dns1123SubdomainPattern,
  isQualifiedName,
  labelValuePattern,
  maxDns1123LabelLength,
  maxDns1123SubdomainLength,
} from "./dns-names.ts";

const nameRule = `must be a lower-case RFC 1123 subdomain (letters, digits, '-', '.'), at most ${maxDns1123SubdomainLength} characters`;
const namespaceRule = `must be a lower-case RFC 1123 label (letters, digits, '-'), at most ${maxDns1123LabelLength} characters`;
const generateNameRule = `must be a prefix of a lower-case RFC 1123 subdomain (letters, digits, '-', '.')`;
const keyRule = "keys must be [prefix/]name: a DNS subdomain prefix, a name of at most 63 alphanumerics, '-', '_', '.'";
const finalizerRule =
  "finalizers must be [prefix/]name: a DNS subdomain prefix, a name of at most 63 alphanumerics, '-', '_', '.'";

/** Most bytes all annotations may take together (keys and values), as the apiserver counts them. */
export const maxAnnotationsBytes = 256 * 1024;

const dns1123SubdomainRegExp = new RegExp(dns1123SubdomainPattern);

// The apiserver appends a random suffix to generateName, so it checks the prefix with its trailing dash masked:
// apimachinery's maskTrailingDash replaces the last two characters with "a".
function isValidGenerateName(prefix: string): boolean {
  const masked = prefix.length > 1 && prefix.endsWith("-") ? `${prefix.slice(0, -2)}a` : prefix;
  return masked.length <= maxDns1123SubdomainLength && dns1123SubdomainRegExp.test(masked);
}

function annotationsBytes(annotations: Record<string, string>): number {
  const encoder = new TextEncoder();
  return Object.entries(annotations).reduce(
    (total, [key, value]) => total + encoder.encode(key).length + encoder.encode(value).length,
    0,
  );
}

const ownerReferenceSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

/** The schema of `metadata`. */
export const objectMetaSchema = z
  .strictObject({
    name: z
      .string({ error: nameRule })
      .max(maxDns1123SubdomainLength, { error: nameRule })
      // "" is "missing" (reported below), not "malformed", as in the apiserver's single error for it.
      .refine((name) => name === "" || dns1123SubdomainRegExp.test(name), { error: nameRule })
      .optional(),
    generateName: z.string().refine(isValidGenerateName, { error: generateNameRule }).optional(),
    namespace: z
      .string({ error: namespaceRule })
      .max(maxDns1123LabelLength, { error: namespaceRule })
      .regex(new RegExp(dns1123LabelPattern), { error: namespaceRule })
      .optional(),
    selfLink: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.int().optional(),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    deletionGracePeriodSeconds: z.int().optional(),
    labels: z
      .record(
        z.string().refine(isQualifiedName, { error: `label ${keyRule}` }),
        z.string().regex(new RegExp(labelValuePattern), {
          error: "label values must be empty or at most 63 alphanumerics, '-', '_', '.', alphanumeric at both ends",
        }),
      )
      .optional(),
    annotations: z
      // Annotation keys are checked lower-cased (unlike label keys): "Example.com/Note" is a valid annotation key.
      .record(
        z.string().refine((key) => isQualifiedName(key.toLowerCase()), { error: `annotation ${keyRule}` }),
        z.string(),
      )
      .refine((annotations) => annotationsBytes(annotations) <= maxAnnotationsBytes, {
        error: `annotations may take at most ${maxAnnotationsBytes} bytes together`,
      })
      .optional(),
    ownerReferences: z.array(ownerReferenceSchema).optional(),
    finalizers: z.array(z.string().refine(isQualifiedName, { error: finalizerRule })).optional(),
    managedFields: z.array(z.looseObject({})).optional(),
  })
  .superRefine(
    (meta, ctx) => {
      // An empty string counts as missing, as in Go.
      if (!meta.name && !meta.generateName) {
        ctx.addIssue({ code: "custom", path: ["name"], message: "is required (or metadata.generateName)" });
      }
    },
    { when: (payload) => typeof payload.value === "object" && payload.value !== null },
  );

/** `metadata` of a MyAppInstance. */
export type ObjectMeta = z.output<typeof objectMetaSchema>;
