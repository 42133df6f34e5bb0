/**
 * "Does the live object already say what we would apply?" Answering yes saves the write, so a converged instance
 * costs zero API writes on resync and after an operator restart (controller-runtime's CreateOrUpdate habit, but
 * against a server-side-apply configuration).
 */
import { isDeepStrictEqual } from "node:util";
import { compareQuantities, maxQuantityLength, parseQuantity } from "../../api/index.ts";

/** Maps whose values are resource quantities ("1Gi" and "1024Mi" are the same request). */
const quantityMaps = new Set(["requests", "limits", "capacity"]);

/**
 * True when every field of `desired` has an equal value in `observed`: the semantic subset an apply of
 * `desired` would leave unchanged. Fields `desired` leaves out are not compared, so server defaults and other
 * managers' fields never cause a write. Equal means:
 *
 * - objects: each desired key is a subset of the observed key's value (extra observed keys, such as labels
 *   added by someone else, are fine, as server-side apply would keep them);
 * - lists of objects with a key (`uid`, `name` or `metadata.name`, as in the Kubernetes list-map keys): each
 *   desired item is a subset of the observed item with the same key; other observed items are fine. Other lists
 *   (atomic lists such as `accessModes`): equal length and item by item;
 * - quantities in `requests`, `limits` and `capacity`: equal value, whatever the notation (unequal when either is
 *   over `maxQuantityLength` characters and the two texts differ);
 * - a number and its decimal string (int-or-string fields such as `targetPort`): equal;
 * - an empty desired list matches an absent one (the apiserver drops empty lists).
 *
 * One thing this cannot see: a field we used to set and no longer set (after an operator upgrade). The next
 * real apply of the object removes it.
 */
export function isSubset(desired: unknown, observed: unknown): boolean {
  return subsetOf(desired, observed, undefined, undefined);
}

/** Deep equality of two JSON values, ignoring key order and undefined fields (status documents). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(normalize(a), normalize(b));
}

/** `ownKey` is the key `desired` sits under; `mapKey` the key of the object holding it ("requests" for a size). */
function subsetOf(
  desired: unknown,
  observed: unknown,
  ownKey: string | undefined,
  mapKey: string | undefined,
): boolean {
  if (desired === undefined) return true;
  if (Array.isArray(desired)) return listSubset(desired, observed, ownKey);
  if (isObject(desired)) {
    if (!isObject(observed)) return false;
    // Own keys only: a rendered object's key such as `__proto__` is data, never an inherited accessor.
    return Object.entries(desired).every(([key, value]) =>
      subsetOf(value, Object.hasOwn(observed, key) ? observed[key] : undefined, key, ownKey),
    );
  }
  return scalarEqual(desired, observed, mapKey);
}

/** Items of a list are compared as if they were held under the list's own key. */
function listSubset(desired: readonly unknown[], observed: unknown, listKey: string | undefined): boolean {
  if (desired.length === 0) return observed === undefined || observed === null || isEmptyList(observed);
  if (!Array.isArray(observed)) return false;
  const keys = desired.map(itemKey);
  if (keys.every((key) => key !== undefined)) {
    // Indexed once: a search of the live list per desired item is quadratic, and a chart's list may be long
    // (25,000 env entries took 6 s of the event loop on every reconcile).
    const byKey = new Map<string, unknown>();
    for (const candidate of observed) {
      const key = itemKey(candidate);
      if (key !== undefined && !byKey.has(key)) byKey.set(key, candidate);
    }
    return desired.every((item, index) => {
      const match = byKey.get(keys[index]!);
      return match !== undefined && subsetOf(item, match, listKey, listKey);
    });
  }
  return (
    desired.length === observed.length &&
    desired.every((item, index) => subsetOf(item, observed[index], listKey, listKey))
  );
}

/** The list-map key of an item: ownerReferences by uid, containers/ports/volumes by name, claim templates by metadata.name. */
function itemKey(item: unknown): string | undefined {
  if (!isObject(item)) return undefined;
  if (typeof item["uid"] === "string") return `uid:${item["uid"]}`;
  if (typeof item["name"] === "string") return `name:${item["name"]}`;
  const metadata = item["metadata"];
  if (isObject(metadata) && typeof metadata["name"] === "string") return `metadata.name:${metadata["name"]}`;
  return undefined;
}

function scalarEqual(desired: unknown, observed: unknown, mapKey: string | undefined): boolean {
  if (desired === observed) return true;
  if (desired === null) return observed === undefined;
  if (mapKey !== undefined && quantityMaps.has(mapKey) && typeof desired === "string" && typeof observed === "string") {
    // A chart writes its own quantities: one longer than any a person writes is not parsed on every reconcile but
    // taken as unequal, so the apply goes out and the apiserver judges it; equal would hide a change.
    if (desired.length > maxQuantityLength || observed.length > maxQuantityLength) return false;
    const a = parseQuantity(desired);
    const b = parseQuantity(observed);
    return a !== undefined && b !== undefined && compareQuantities(a, b) === 0;
  }
  // int-or-string: the same port or count, written once as a number and once as a string.
  if (typeof desired === "number" && typeof observed === "string") return String(desired) === observed;
  if (typeof desired === "string" && typeof observed === "number") return desired === String(observed);
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}

function normalize(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
