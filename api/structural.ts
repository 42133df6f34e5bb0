/**
 * Turns zod's JSON Schema output into a Kubernetes structural schema, the dialect a CRD's `openAPIV3Schema`
 * must be written in. The differences are few and known:
 * - `additionalProperties: false` next to `properties` is forbidden; the apiserver's strict field validation
 *   rejects unknown fields instead (zod's strict objects do the same on our side);
 * - a free-form object is `x-kubernetes-preserve-unknown-fields: true` without `additionalProperties`;
 * - keys come out in one fixed order, so the generated YAML diffs cleanly whatever zod's internals do;
 * - a `pattern` marked with {@link patternMessageKey} becomes a CEL rule with that message: the apiserver's own
 *   error for a pattern prints the regular expression, which tells a user nothing.
 */
import { byCodeUnits } from "./code-unit-order.ts";
import { celString } from "./cel-string.ts";

/** The subset of OpenAPI v3 that structural schemas use (plus the Kubernetes extensions). */
export interface StructuralSchema {
  description?: string;
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  format?: string;
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  items?: StructuralSchema;
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  required?: string[];
  [extension: `x-kubernetes-${string}`]: unknown;
}

// The order keys are written in: what a reader wants first comes first.
const keyOrder = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "nullable",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "items",
  "properties",
  "additionalProperties",
  "required",
];

/**
 * Meta key of a zod string schema: the message of its regex, for the CRD. The CRD then checks the pattern with a
 * CEL rule saying this instead of OpenAPI's `pattern` (`kubectl apply` printed `should match '^(?:(?:(?:[a-zA-Z0-9]|…`).
 */
export const patternMessageKey = "x-myapp-pattern-message";

// JSON Schema that a structural schema cannot hold: a zod schema that needs these cannot become a CRD as is.
const unsupported = ["$ref", "$defs", "definitions", "anyOf", "oneOf", "allOf", "not", "const"];

/**
 * A structural schema equivalent to `schema` (zod's `openapi-3.0` output), for a CRD. Pure. Throws on JSON
 * Schema constructs a structural schema cannot express, naming the construct.
 */
export function toStructuralSchema(schema: Record<string, unknown>): StructuralSchema {
  const found = unsupported.find((key) => key in schema);
  if (found !== undefined) throw new Error(`${found} cannot appear in a structural schema: ${JSON.stringify(schema)}`);
  const out: Record<string, unknown> = {};
  const patternMessage = schema[patternMessageKey];
  const patternAsRule = typeof patternMessage === "string" && typeof schema["pattern"] === "string";
  const keys = Object.keys(schema)
    .filter((key) => key !== "$schema" && key !== patternMessageKey && !(patternAsRule && key === "pattern"))
    .sort((a, b) => rank(a) - rank(b) || byCodeUnits(a, b));
  for (const key of keys) {
    const value = schema[key];
    if (key === "additionalProperties" && value === false) continue;
    // A free-form object (z.record of unknown) is written as x-kubernetes-preserve-unknown-fields alone.
    if (key === "additionalProperties" && schema["x-kubernetes-preserve-unknown-fields"] === true) continue;
    if (key === "items" && isRecord(value)) out[key] = toStructuralSchema(value);
    else if (key === "additionalProperties" && isRecord(value)) out[key] = toStructuralSchema(value);
    else if (key === "properties" && isRecord(value)) out[key] = mapValues(value, toStructuralSchema);
    else out[key] = value;
  }
  if (patternAsRule) {
    const rules = Array.isArray(schema["x-kubernetes-validations"]) ? schema["x-kubernetes-validations"] : [];
    out["x-kubernetes-validations"] = [
      { rule: `self.matches(${celString(schema["pattern"] as string)})`, message: patternMessage },
      ...rules,
    ];
  }
  return out as StructuralSchema;
}

/** `text` as a CEL string literal: single-quoted, its backslashes and quotes escaped. */

function rank(key: string): number {
  const index = keyOrder.indexOf(key);
  return index === -1 ? keyOrder.length : index;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function mapValues(
  record: Record<string, unknown>,
  map: (value: Record<string, unknown>) => StructuralSchema,
): Record<string, StructuralSchema> {
  const out: Record<string, StructuralSchema> = {};
  for (const [key, value] of Object.entries(record)) {
    if (!isRecord(value)) throw new Error(`property ${key} has no schema object`);
    out[key] = map(value);
  }
  return out;
}
