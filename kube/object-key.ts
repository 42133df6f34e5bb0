/**
 * The key of an object: its namespace and name, written `namespace/name`, or `name` alone for a cluster-scoped
 * object (client-go's MetaNamespaceKeyFunc). The one key of the house: the operator runtime's work queue and cache
 * are keyed by it, a reconcile request is one, the provider stores it as a MyAppInstance's resource id, and the
 * tools name objects with it. It lives in kube/, the lowest floor all of them may import (the runtime may not
 * import api/).
 */

/** Namespace and name of an object (controller-runtime's `client.ObjectKey`). */
export interface ObjectKey {
  /** "" for a cluster-scoped object, as in Kubernetes' own `types.NamespacedName`. */
  readonly namespace: string;
  readonly name: string;
}

/** How {@link parseObjectKey} reads a key, and how its error names it. */
export interface ParseObjectKeyOptions {
  /** What the text is, for the error: "reconcile key", "MyAppInstance id". @default "object key" */
  readonly what?: string;
  /** Accept `name` alone, the key of a cluster-scoped object (namespace ""). @default false: `namespace/name` only */
  readonly clusterScoped?: boolean;
}

/**
 * The key of an object, from its metadata (or any namespace and name): namespace "" when it has none.
 *
 * @throws Error when there is no name (an object read from the apiserver always has one), or when the namespace or
 *   the name holds a "/" (the apiserver allows none: its text would read back as another key).
 */
export function objectKeyOf(metadata: {
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}): ObjectKey {
  const { namespace = "", name } = metadata;
  if (!name) throw new Error("cannot key an object without metadata.name");
  refuseSlash("namespace", namespace);
  refuseSlash("name", name);
  return { namespace, name };
}

function refuseSlash(field: "namespace" | "name", value: string): void {
  if (value.includes("/")) {
    throw new Error(`cannot key an object whose metadata.${field} "${value}" holds a "/": a ${field} has none`);
  }
}

/**
 * `namespace/name`, or `name` for a cluster-scoped object (no or empty namespace). {@link parseObjectKey} reads it
 * back exactly, so the text can stand for the key where a primitive is needed (a Map's key, a log line).
 *
 * @throws Error as {@link objectKeyOf}: no name, or a "/" in the namespace or the name.
 */
export function formatObjectKey(key: {
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}): string {
  const { namespace, name } = objectKeyOf(key);
  return namespace ? `${namespace}/${name}` : name;
}

/** True when `a` and `b` name the same object. */
export function sameObjectKey(a: ObjectKey, b: ObjectKey): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

/**
 * The namespace and name in `text`, the inverse of {@link formatObjectKey}.
 *
 * @throws Error naming `text`, the expected form and what is wrong with it.
 */
export function parseObjectKey(text: string, options: ParseObjectKeyOptions = {}): ObjectKey {
  const { what = "object key", clusterScoped = false } = options;
  const slash = text.indexOf("/");
  const problem = keyProblem(text, slash, clusterScoped);
  if (problem !== undefined) {
    const expected = clusterScoped ? `"namespace/name" or "name"` : `"namespace/name"`;
    throw new Error(`invalid ${what} "${text}": expected ${expected}, but ${problem}`);
  }
  return slash < 0 ? { namespace: "", name: text } : { namespace: text.slice(0, slash), name: text.slice(slash + 1) };
}

/** The namespace of a key's text ("" for a cluster-scoped one): the work queue's and rate limiter's fairness group. */
export function namespaceOfKey(text: string): string {
  return parseObjectKey(text, { clusterScoped: true }).namespace;
}

/** What is wrong with `text` as a key, or undefined when nothing is. */
function keyProblem(text: string, slash: number, clusterScoped: boolean): string | undefined {
  if (text === "") return "it is empty";
  if (slash < 0) return clusterScoped ? undefined : `it has no "/" between namespace and name`;
  if (slash === 0) return "the namespace is empty";
  if (slash === text.length - 1) return "the name is empty";
  if (text.indexOf("/", slash + 1) >= 0) return `it has more than one "/"`;
  return undefined;
}
