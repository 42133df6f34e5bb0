/**
 * The verdict functions: what the apiserver would say about an object, said in TS before anything is sent.
 * Each returns every failure at once, each naming its field the way the apiserver does (`spec.port`), so
 * `pulumi preview` can fail with the same words `kubectl apply` would print.
 */
import type * as z from "zod";
import { openApiV3Schema } from "./crd.ts";
import type { FieldIssue } from "./field-issue.ts";
import { myAppInstanceSchema } from "./instance.ts";
import type { MyAppInstanceObject } from "./instance.ts";
import { containsNull, pruneNulls, pruneObjectNulls } from "./null-pruning.ts";
import { myAppInstanceSpecSchema } from "./spec.ts";
import type { MyAppInstanceSpec } from "./spec.ts";
import { myAppInstanceStatusSchema } from "./status.ts";
import type { MyAppInstanceStatus } from "./status.ts";
import type { StructuralSchema } from "./structural.ts";

/** The verdict on a spec: the spec with defaults applied, or why not. */
export type SpecVerdict = { ok: true; spec: MyAppInstanceSpec } | { ok: false; issues: FieldIssue[] };

/** The verdict on a status. */
export type StatusVerdict = { ok: true; status: MyAppInstanceStatus } | { ok: false; issues: FieldIssue[] };

/** The verdict on a whole object. */
export type InstanceVerdict = { ok: true; instance: MyAppInstanceObject } | { ok: false; issues: FieldIssue[] };

// The structural schema is what the apiserver walks to drop nulls; generating it once is enough, and only for a
// value that has a null to drop (generating it is ~10 ms of a provider's first check, on every preview).
let rootSchema: StructuralSchema | undefined;
function structural(): StructuralSchema {
  rootSchema ??= openApiV3Schema();
  return rootSchema;
}

function withoutNulls(input: unknown, part: "spec" | "status"): unknown {
  return containsNull(input) ? pruneNulls(input, structural().properties?.[part]) : input;
}

/**
 * A spec (or any part of one) without the nulls the apiserver would drop: what each field looks like to the
 * apiserver, for checking fields one by one.
 */
export function specWithoutNulls(spec: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return withoutNulls(spec, "spec") as Record<string, unknown>;
}

/**
 * Fields a spec may hold outside `spec.values`, its objects' keys and items together, with room to spare: a spec
 * has a few dozen. Past it, zod would name every unknown key one by one (200,000 of them took 735 ms), which an
 * AdmissionReview sent to the webhook by anything on the pod network may hold; the apiserver's own never do, as it
 * drops unknown fields first.
 */
export const maxSpecFields = 200;

/** Validates a spec as the apiserver would on create (issue paths start with `spec.`). */
export function validateSpec(input: unknown): SpecVerdict {
  if (fieldsOutsideValues(input) > maxSpecFields) {
    return {
      ok: false,
      issues: [
        {
          path: "spec",
          message:
            `has more than ${maxSpecFields} fields outside spec.values, where a MyAppInstance spec has a few dozen ` +
            "(unknown fields are rejected, not dropped)",
        },
      ],
    };
  }
  const value = withoutNulls(input, "spec");
  const result = myAppInstanceSpecSchema.safeParse(value);
  return result.success
    ? { ok: true, spec: result.data }
    : { ok: false, issues: toFieldIssues(result.error, value, "spec") };
}

/** The keys and items of `spec`'s objects and lists, `spec.values` aside, counted up to just past the bound. */
function fieldsOutsideValues(spec: unknown): number {
  if (spec === null || typeof spec !== "object") return 0;
  let fields = 0;
  const pending: object[] = [spec];
  for (let node = pending.pop(); node !== undefined && fields <= maxSpecFields; node = pending.pop()) {
    // for…in, not Object.entries: it stops at the bound without building a pair for each of 200,000 keys.
    for (const key in node) {
      if (!Object.hasOwn(node, key) || (node === spec && key === "values")) continue;
      fields++;
      const value: unknown = (node as Record<string, unknown>)[key];
      if (value !== null && typeof value === "object") pending.push(value);
      if (fields > maxSpecFields) break;
    }
  }
  return fields;
}

/** Validates a status as the apiserver would on a write to the status subresource. */
export function validateStatus(input: unknown): StatusVerdict {
  const value = withoutNulls(input, "status");
  const result = myAppInstanceStatusSchema.safeParse(value);
  return result.success
    ? { ok: true, status: result.data }
    : { ok: false, issues: toFieldIssues(result.error, value, "status") };
}

/** Validates a whole object as the apiserver would on create (spec, metadata names and labels, unknown fields). */
export function validateInstance(input: unknown): InstanceVerdict {
  const value = containsNull(input) ? pruneObjectNulls(input, structural()) : input;
  const result = myAppInstanceSchema.safeParse(value);
  return result.success
    ? { ok: true, instance: result.data }
    : { ok: false, issues: toFieldIssues(result.error, value, "") };
}

/** zod's issues as field issues: one per field and message, unknown keys each named, paths as the apiserver's. */
function toFieldIssues(error: z.ZodError, input: unknown, prefix: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const issue of error.issues) {
    const path = [...(prefix === "" ? [] : [prefix]), ...issue.path.map((segment) => segment as string | number)];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        issues.push({
          path: fieldPath([...path, key]),
          message: "is not a known field (unknown fields are rejected, not dropped)",
        });
      }
    } else if (issue.code === "invalid_key") {
      issues.push({ path: fieldPath(path), message: issue.issues[0]?.message ?? issue.message });
    } else if (issue.code === "invalid_type" && valueAt(input, issue.path) === undefined) {
      issues.push({ path: fieldPath(path), message: `is required: ${lowerFirst(issue.message)}` });
    } else {
      issues.push({ path: fieldPath(path), message: issue.message });
    }
  }
  return dedupe(issues);
}

/** `spec.conditions[0].type`: dots between names, brackets around indexes, as `field.Path` prints them. */
export function fieldPath(segments: readonly (string | number)[]): string {
  return segments.reduce<string>((path, segment) => {
    if (typeof segment === "number") return `${path}[${segment}]`;
    return path === "" ? segment : `${path}.${segment}`;
  }, "");
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function dedupe(issues: FieldIssue[]): FieldIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
