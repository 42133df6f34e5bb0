/**
 * What the cluster's admission added to an instance at the preview's dry-run: the fields its mutating webhooks
 * set that the inputs left out (the platform's webhook sets `podSecurityLevel` from the namespace's Pod Security
 * label), so `pulumi preview` says what the stored object will hold. The CRD's own defaults are not admission's
 * doing and are left out: they are whatever zod's schema fills in for a bare spec.
 */
import { validateSpec } from "../api/index.ts";

const bare = validateSpec({ image: "example" });
/** Spec fields the CRD defaults itself (replicas, port, storageReclaimPolicy). */
const crdDefaulted: ReadonlySet<string> = new Set(
  bare.ok ? Object.keys(bare.spec).filter((key) => key !== "image") : [],
);

/** `field: value` for each spec field admission set on `admitted` that `desired` does not have. */
export function admissionDefaults(desired: object, admitted: object | undefined): string[] {
  const wanted = specOf(desired);
  return Object.entries(specOf(admitted))
    .filter(([key]) => !Object.hasOwn(wanted, key) && !crdDefaulted.has(key))
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
}

function specOf(object: object | undefined): Readonly<Record<string, unknown>> {
  const spec = (object as { spec?: unknown } | undefined)?.spec;
  return typeof spec === "object" && spec !== null ? (spec as Record<string, unknown>) : {};
}
