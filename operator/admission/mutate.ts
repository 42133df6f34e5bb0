/**
 * The mutating webhook's one default, which a CRD default cannot express because it depends on the namespace:
 * an unset `spec.podSecurityLevel` becomes `Baseline` where the namespace's Pod Security label enforces
 * `baseline` or `privileged` (the platform made that namespace for images that must start as root). Where it
 * enforces `restricted`, or has no label, nothing is added: unset already means Restricted. Nothing else is ever
 * changed. Pure.
 *
 * The default is given when an instance is created, and given again on an UPDATE that drops it while the stored
 * instance has it (a server-side apply of a manifest that never names the field does that, since the field was
 * set on the applier's behalf): so re-applying the same manifest never rolls the pods over to another level. An
 * instance stored without the field keeps running Restricted: a change of some other field does not roll it to
 * Baseline because the namespace is labelled so.
 */
import type { PodSecurityLevel } from "../../api/index.ts";
import { podSecurityEnforceLabel } from "./policy.ts";

/** One RFC 6902 operation; the webhook only ever adds. */
export interface JsonPatchOperation {
  readonly op: "add";
  readonly path: string;
  readonly value: unknown;
}

/** The level an unset `spec.podSecurityLevel` means in a namespace with these labels, when not Restricted. */
export function namespaceDefaultLevel(
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): PodSecurityLevel | undefined {
  const enforced = namespaceLabels?.[podSecurityEnforceLabel];
  return enforced === "baseline" || enforced === "privileged" ? "Baseline" : undefined;
}

/**
 * The JSON patch that gives `instance` its namespace's defaults: empty, or one `add` of `/spec/podSecurityLevel`.
 * `old` is the stored instance of an UPDATE. Reads `spec` defensively: mutation runs before the schema is checked.
 */
export function defaultsFor(
  instance: { readonly spec?: unknown },
  namespaceLabels: Readonly<Record<string, string>> | undefined,
  old?: { readonly spec?: unknown },
): JsonPatchOperation[] {
  const spec = instance.spec;
  if (typeof spec !== "object" || spec === null || Array.isArray(spec) || "podSecurityLevel" in spec) return [];
  const level = namespaceDefaultLevel(namespaceLabels);
  if (level === undefined) return [];
  if (old !== undefined && storedLevel(old) !== level) return [];
  return [{ op: "add", path: "/spec/podSecurityLevel", value: level }];
}

function storedLevel(old: { readonly spec?: unknown }): unknown {
  const spec = old.spec;
  return typeof spec === "object" && spec !== null
    ? (spec as { podSecurityLevel?: unknown }).podSecurityLevel
    : undefined;
}
