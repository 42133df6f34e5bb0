/**
 * The pure half of the provider's `diff`: which inputs changed, and which of those need a new object. Only the
 * inputs are compared, never what the cluster adds (defaults, status, uid), so a converged instance shows no
 * change. A new kubeconfig, context (a rotated token) or timeout changes nothing in the cluster, but it is an
 * update of the state: refresh and destroy see only the outputs, and must reach the cluster with the newest
 * credentials and wait for its finalizer as long as the program now says, not as the last spec change said. Old
 * values come from state (the outputs, which carry every input); new ones from check.
 */
import { isDeepStrictEqual } from "node:util";
import { checkSpecTransition } from "../api/index.ts";
import { inputKeys, isUnknown, operationKeys, specKeys, type InputKey, type PropertyBag } from "./inputs.ts";
import { byCodeUnits } from "../api/code-unit-order.ts";

/** The verdict, in the terms of `pulumi.dynamic.DiffResult` plus the changed keys for logs and tests. */
export interface DiffOutcome {
  readonly changes: boolean;
  /**
   * Changed keys that need a new object: name or namespace. The new object therefore never has the old one's
   * namespace/name, so pulumi's default (create the new one, then delete the old) never collides.
   */
  readonly replaces: InputKey[];
  /** Every changed key, unknown values included. */
  readonly changed: InputKey[];
}

/** A change the apiserver's transition rules would reject and that a replacement would not fix. */
export class ForbiddenChangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ForbiddenChangeError";
  }
}

/** The keys that are the instance: everything but how to reach its cluster and how long to wait. */
const instanceKeys = inputKeys.filter((key) => !(operationKeys as readonly string[]).includes(key));

/**
 * Compares old outputs with new checked inputs. Unknown values count as changed; an unknown name or namespace
 * counts as a replacement, because the value may turn out to need one. Throws {@link ForbiddenChangeError} for a
 * storage removal, shrink or class change (check reports those first, naming the field).
 */
export function diffInputs(olds: PropertyBag, news: PropertyBag): DiffOutcome {
  const changed: InputKey[] = instanceKeys.filter((key) => isUnknown(news[key]) || !sameValue(olds[key], news[key]));
  // How to reach the cluster and how long to wait, stored for refresh and destroy: a new value is an update of the
  // state alone. Known and different only: an unknown connection (a plain k8s.Provider's context) is no news.
  for (const key of operationKeys) {
    if (!isUnknown(news[key]) && !sameValue(olds[key], news[key])) changed.push(key);
  }
  const replaces: InputKey[] = [];
  const identityChanged = changed.includes("name") || changed.includes("namespace");
  if (changed.includes("name")) replaces.push("name");
  if (changed.includes("namespace")) replaces.push("namespace");

  if (!identityChanged) rejectForbiddenTransitions(olds, news);
  else rejectReplaceThatDeletesKeptData(olds, news);

  return { changes: changed.length > 0, replaces, changed };
}

/**
 * A replacement deletes the old instance as it is stored: with `storageReclaimPolicy: Delete` there, its volumes
 * go, whatever the new inputs say. A program that says Retain (or leaves it out) in the same change means to keep
 * them, so the change is refused until the policy is applied on its own. Whether the old instance has volumes is
 * not asked: besides `storage` and its own chart, the platform's default chart may have given it StatefulSets,
 * which the inputs do not show.
 */
function rejectReplaceThatDeletesKeptData(olds: PropertyBag, news: PropertyBag): void {
  if (olds["storageReclaimPolicy"] !== "Delete") return;
  if (isUnknown(news["storageReclaimPolicy"]) || news["storageReclaimPolicy"] === "Delete") return;
  throw new ForbiddenChangeError(
    `storageReclaimPolicy: the instance is replaced (a new name or namespace), and the one replaced says Delete, so ` +
      `its volumes (of storage, its chart or the platform's default chart) would be deleted although the program ` +
      `now keeps them; run pulumi up with the new storageReclaimPolicy and the old name and namespace first, then ` +
      `replace it`,
  );
}

function rejectForbiddenTransitions(olds: PropertyBag, news: PropertyBag): void {
  if ([news["storage"], news["storageClassName"]].some(isUnknown)) return;
  const issues = checkSpecTransition(
    { storage: text(olds["storage"]), storageClassName: text(olds["storageClassName"]) },
    { storage: text(news["storage"]), storageClassName: text(news["storageClassName"]) },
  );
  if (issues.length === 0) return;
  const lines = issues.map((issue) => `${issue.path} ${issue.message}`);
  throw new ForbiddenChangeError(
    `${lines.join("; ")}. The apiserver would reject this change; to get a volume of another size or class, or none, ` +
      `give the instance a new name (a replacement).`,
  );
}

/**
 * True when no input of the instance's spec changed since `olds` (state): a preview then asks the cluster nothing.
 * Deep, for the object-valued inputs (`resources`, `chart`, `values`), which check hands over as new objects.
 */
export function unchangedSpec(olds: PropertyBag, inputs: PropertyBag): boolean {
  return specKeys.every((key) => sameValue(olds[key], inputs[key]));
}

/**
 * True when nothing the object holds changed since `olds`: its spec, and the ownership markers its annotations
 * carry (`owner`, `logicalName`: a stack or resource renamed), so an update may write nothing to the cluster.
 */
export function unchangedObject(olds: PropertyBag, inputs: PropertyBag): boolean {
  return instanceKeys.every((key) => sameValue(olds[key], inputs[key]));
}

// Deep: object-valued inputs come as new objects every time; key order does not matter to JSON, nor here.
function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(canonical(a ?? undefined), canonical(b ?? undefined));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return Object.fromEntries(entries.sort(([a], [b]) => byCodeUnits(a, b)).map(([k, v]) => [k, canonical(v)]));
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
