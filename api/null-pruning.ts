/**
 * The apiserver drops `null` from a custom resource before it validates it: a field that is neither nullable nor
 * defaulted disappears, and a defaulted one gets its default (apiextensions-apiserver's
 * `PruneNonNullableNullsWithoutDefaults`, then defaulting). So `replicas: null` means "the default" and
 * `image: null` means "missing". zod would call both a type error; pruning first gives zod the apiserver's view.
 */
import { objectMetaSchema } from "./object-meta.ts";
import type { StructuralSchema } from "./structural.ts";

// ObjectMeta is decoded into a Go struct, where null reads as "not set" for every known field.
const objectMetaFields = new Set(Object.keys(objectMetaSchema.shape));

/**
 * A copy of `value` without the nulls the apiserver would drop, walking `schema` as the apiserver does: only
 * where the schema declares the property (an unknown field stays, to be reported as unknown); array items are
 * walked but never dropped.
 */
export function pruneNulls(value: unknown, schema: StructuralSchema | undefined): unknown {
  // Below where the schema ends (a free-form field such as spec.values) nothing is dropped: no copy needed, and
  // the recursion stays as deep as the schema, however deep the data.
  if (schema === undefined) return value;
  if (Array.isArray(value)) return value.map((item) => pruneNulls(item, schema.items));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema = propertySchema(schema, key);
    if (child === null && childSchema !== undefined && childSchema.nullable !== true) continue;
    // An own data property, as JSON.parse made it: a free-form key such as `__proto__` stays a key of this
    // copy, never the prototype setter (which --disable-proto=throw turns into an exception).
    Object.defineProperty(out, key, {
      value: pruneNulls(child, childSchema),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * True when `value` holds a `null` anywhere: without one, {@link pruneNulls} has nothing to drop. Iterative: a
 * free-form field may nest thousands of levels deep (api/chart.ts `maxValuesDepth`), past the stack.
 */
export function containsNull(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === null) return true;
    if (typeof next === "object") for (const child of Object.values(next)) pending.push(child);
  }
  return false;
}

/** {@link pruneNulls} for a whole object, whose `metadata` follows ObjectMeta's rules rather than the schema's. */
export function pruneObjectNulls(object: unknown, schema: StructuralSchema): unknown {
  const pruned = pruneNulls(object, schema);
  if (!isObject(pruned) || !isObject(pruned["metadata"])) return pruned;
  const metadata = Object.entries(pruned["metadata"]).filter(([key, v]) => !(v === null && objectMetaFields.has(key)));
  return { ...pruned, metadata: Object.fromEntries(metadata) };
}

function propertySchema(schema: StructuralSchema | undefined, key: string): StructuralSchema | undefined {
  // Own properties only: `constructor` or `__proto__` in the data is not a property the schema declares.
  const properties = schema?.properties;
  if (properties !== undefined && Object.hasOwn(properties, key)) return properties[key];
  return typeof schema?.additionalProperties === "object" ? schema.additionalProperties : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
