/**
 * The pure half of the provider's `check`: validate the inputs with the api's zod rules, report every failure
 * at once with the input key it belongs to, apply defaults (so later diffs compare like with like), and choose
 * the name. Values the engine does not know yet (the placeholder string during preview) are left alone; their
 * checks run again at `pulumi up`, when the engine calls check with everything resolved.
 */
import {
  checkSpecTransition,
  myAppInstanceSpecSchema,
  objectMetaSchema,
  specRules,
  specWithoutNulls,
  validateSpec,
  type FieldIssue,
} from "../api/index.ts";
import { autoName } from "./auto-name.ts";
import {
  defaultNamespace,
  defaultTimeoutSeconds,
  containsUnknown,
  inputKeys,
  isUnknown,
  maxTimeoutSeconds,
  specKeys,
  type DerivedOutputs,
  type PropertyBag,
  type SpecKey,
} from "./inputs.ts";
import { derivedOutputs } from "./manifest.ts";

/** One failed input, as `pulumi.dynamic.CheckFailure`: `property` is a top-level input key ("" for the whole). */
export interface InputFailure {
  readonly property: string;
  readonly reason: string;
}

/** The checked inputs (defaults applied, unknowns kept) and every failure found. */
export interface CheckOutcome {
  readonly inputs: Record<string, unknown>;
  readonly failures: InputFailure[];
}

/**
 * Checks `news` against the api's rules and, when `olds` are the inputs of an existing instance, against the
 * transition rules (storage may not be removed or shrink; its class may not change once set). An empty string is
 * a value like any other and gets the field's error; only a missing (undefined or null) input takes the default.
 */
export function checkInputs(olds: PropertyBag, news: PropertyBag): CheckOutcome {
  const failures: InputFailure[] = [];
  const inputs: Record<string, unknown> = {};

  const owner = requiredText(news, "owner", failures);
  const logicalName = requiredText(news, "logicalName", failures);

  inputs["name"] = chooseName(olds, news, owner, logicalName);
  failures.push(...metadataFailures("name", inputs["name"]));
  inputs["namespace"] = absent(news["namespace"]) ? defaultNamespace : news["namespace"];
  failures.push(...metadataFailures("namespace", inputs["namespace"]));

  const spec = checkSpec(news);
  failures.push(...spec.failures);
  Object.assign(inputs, spec.values);

  for (const key of ["kubeconfig", "context"] as const) {
    const value = news[key];
    if (absent(value)) continue;
    // Never name the kubeconfig as the failing property: the CLI would print its value next to the reason.
    if (typeof value !== "string" || value === "") {
      failures.push(
        key === "kubeconfig"
          ? { property: "", reason: "kubeconfig must be the text of a kubeconfig file (a non-empty string)" }
          : { property: key, reason: "must be the name of a context in the kubeconfig (a non-empty string)" },
      );
    }
    inputs[key] = value;
  }

  const timeout = absent(news["timeoutSeconds"]) ? defaultTimeoutSeconds : news["timeoutSeconds"];
  if (
    !isUnknown(timeout) &&
    !(Number.isInteger(timeout) && (timeout as number) >= 1 && (timeout as number) <= maxTimeoutSeconds)
  ) {
    failures.push({
      property: "timeoutSeconds",
      reason: `must be a whole number of seconds from 1 to ${maxTimeoutSeconds}`,
    });
  }
  inputs["timeoutSeconds"] = timeout;
  inputs["owner"] = news["owner"];
  inputs["logicalName"] = news["logicalName"];

  failures.push(...transitionFailures(olds, inputs));
  return { inputs: { ...ordered(inputs), ...knownOutputs(inputs) }, failures };
}

/** The outputs that follow from the inputs, when those are known: a preview then shows them, not "unknown". */
function knownOutputs(inputs: PropertyBag): Partial<DerivedOutputs> {
  const { name, namespace, port } = inputs;
  if (typeof name !== "string" || typeof namespace !== "string" || typeof port !== "number") return {};
  if ([name, namespace].some(isUnknown)) return {};
  return derivedOutputs({ name, namespace, port });
}

/**
 * The explicit name; else the name already in state (so an instance never changes name by itself, and dropping
 * an explicit name is not a replacement); else the deterministic auto-name.
 */
function chooseName(olds: PropertyBag, news: PropertyBag, owner: unknown, logicalName: unknown): unknown {
  const explicit = news["name"];
  if (!absent(explicit)) return explicit;
  const previous = olds["name"];
  if (typeof previous === "string" && previous !== "" && !isUnknown(previous)) return previous;
  if (typeof owner === "string" && typeof logicalName === "string") return autoName(logicalName, owner);
  return undefined;
}

/** The apiserver's rules for metadata.name / metadata.namespace (the api's objectMetaSchema). */
function metadataFailures(key: "name" | "namespace", value: unknown): InputFailure[] {
  if (isUnknown(value)) return [];
  if (value === undefined) return key === "name" ? [{ property: "name", reason: "is required" }] : [];
  if (value === "") {
    const instead = key === "name" ? "leave it out for the auto-name" : `leave it out for "${defaultNamespace}"`;
    return [{ property: key, reason: `must not be empty: ${instead}` }];
  }
  const result = objectMetaSchema.shape[key].safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => ({ property: key, reason: issue.message }));
}

/**
 * The spec keys checked with the api's zod schema. With everything known, the whole-spec verdict decides (with
 * its cross-field rules). With some keys unknown (or an object holding an unknown: `resources.limits.memory`),
 * each known key is checked on its own, its nulls dropped as the apiserver would, and cross-field rules wait for
 * `pulumi up`: one of them may involve the unknown value.
 */
function checkSpec(news: PropertyBag): { values: Partial<Record<SpecKey, unknown>>; failures: InputFailure[] } {
  const known: Record<string, unknown> = {};
  const unknownKeys = new Set<SpecKey>();
  for (const key of specKeys) {
    const value = news[key];
    if (containsUnknown(value)) unknownKeys.add(key);
    else if (!absent(value)) known[key] = value;
  }

  if (unknownKeys.size === 0) {
    const verdict = validateSpec(known);
    if (verdict.ok) return { values: { ...verdict.spec }, failures: [] };
    return { values: known, failures: verdict.issues.map(toInputFailure) };
  }

  const values: Partial<Record<SpecKey, unknown>> = {};
  const failures: InputFailure[] = [];
  const verdict = validateSpec(known);
  const pruned = specWithoutNulls(known);
  for (const key of specKeys) {
    if (unknownKeys.has(key)) {
      values[key] = news[key];
      continue;
    }
    const field = myAppInstanceSpecSchema.shape[key].safeParse(pruned[key]);
    if (field.success) {
      if (field.data !== undefined) values[key] = field.data;
    } else {
      values[key] = known[key];
      // The whole-spec verdict words the issue as the apiserver would ("is required: ..."); use it when present.
      const worded = verdict.ok ? [] : verdict.issues.filter((issue) => topLevelKey(issue.path) === key);
      if (worded.length > 0) failures.push(...worded.map(toInputFailure));
      else failures.push(...field.error.issues.map((issue) => ({ property: key, reason: issue.message })));
    }
  }
  return { values, failures };
}

/**
 * Storage removal, shrink and a class change once storage is set are rejected by the CRD's transition rules, and
 * no implicit replacement may do them instead (it would delete the volumes, or keep them at their old size and
 * class), so they fail here, in preview, naming the field. Nothing applies when the name or namespace changes:
 * that is a new object.
 */
function transitionFailures(olds: PropertyBag, inputs: PropertyBag): InputFailure[] {
  if (absent(olds["image"]) || olds["name"] !== inputs["name"] || olds["namespace"] !== inputs["namespace"]) return [];
  const storage = (bag: PropertyBag) => ({
    storage: optionalText(bag["storage"]),
    storageClassName: optionalText(bag["storageClassName"]),
  });
  if (isUnknown(inputs["storage"]) || isUnknown(inputs["storageClassName"])) return [];
  return checkSpecTransition(storage(olds), storage(inputs)).map((issue) => {
    const removed = issue.message === specRules.storageNotRemovable;
    return {
      property: topLevelKey(issue.path),
      reason: removed
        ? `${issue.message}. To drop the volumes and their data on purpose: set storageReclaimPolicy "Delete" ` +
          `and run \`pulumi up\`, then remove the instance from the program (or give it a new name) and run ` +
          `\`pulumi up\` again.`
        : `${issue.message}. To get a volume of another size or class, give the instance a new name (a ` +
          `replacement: retained volumes stay with the old name).`,
    };
  });
}

/**
 * The input key, with what lies below it named in the reason unless the reason names it already: in a free-form
 * input (`values`) the key path is the only way to find the offending key (`values.a.__proto__` → `a.__proto__: ...`).
 */
function toInputFailure(issue: FieldIssue): InputFailure {
  const property = topLevelKey(issue.path);
  const rest = issue.path.startsWith("spec.") ? issue.path.slice("spec.".length) : issue.path;
  const below = rest.slice(property.length).replace(/^\./, "");
  const named = below === "" || issue.message.includes(issue.path);
  return { property, reason: named ? issue.message : `${below}: ${issue.message}` };
}

/** `spec.storage` → `storage`: the input key a field issue belongs to. */
function topLevelKey(path: string): string {
  const rest = path.startsWith("spec.") ? path.slice("spec.".length) : path;
  return rest.split(/[.[]/)[0] ?? rest;
}

function requiredText(news: PropertyBag, key: "owner" | "logicalName", failures: InputFailure[]): unknown {
  const value = news[key];
  if (typeof value === "string" && value !== "") return value;
  if (isUnknown(value)) return value;
  failures.push({ property: key, reason: "is set by the MyAppInstance resource class; create instances with it" });
  return undefined;
}

function optionalText(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Not given. An empty string is given: it is checked like any other value (and is never a valid one here). */
function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

function ordered(inputs: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key of inputKeys) if (inputs[key] !== undefined) result[key] = inputs[key];
  return result;
}

/**
 * Why an instance with a platform may not go to `namespace`: its operator watches other namespaces only, so the
 * instance would wait for Ready until its timeout. Undefined when it may, or the platform does not say.
 */
export function unwatchedNamespace(namespace: string, platform: unknown): InputFailure | undefined {
  if (platform === null || typeof platform !== "object") return undefined;
  const { platform: name, watched } = platform as { platform?: unknown; watched?: unknown };
  if (!Array.isArray(watched) || watched.length === 0 || watched.includes(namespace)) return undefined;
  const list = watched.join(", ");
  return {
    property: "namespace",
    reason:
      `namespace "${namespace}" is not one ${String(name)}'s operator watches (watchNamespaces: ${list}): the ` +
      `instance would never become Ready; use one of those, or add it to the platform's watchNamespaces`,
  };
}
