/** Work-queue keys: "namespace/name" for namespaced objects, "name" for cluster-scoped ones (client-go's format). */

/** The key of an object from its metadata. */
export function objectKey(metadata: { readonly namespace?: string; readonly name?: string }): string {
  if (!metadata.name) throw new Error("cannot key an object without metadata.name");
  return metadata.namespace ? `${metadata.namespace}/${metadata.name}` : metadata.name;
}

/** Splits a key back into namespace and name; the namespace is undefined for a cluster-scoped key. */
export function parseKey(key: string): { readonly namespace: string | undefined; readonly name: string } {
  const slash = key.indexOf("/");
  if (slash < 0) return { namespace: undefined, name: key };
  const namespace = key.slice(0, slash);
  const name = key.slice(slash + 1);
  if (!namespace || !name || name.includes("/")) {
    throw new Error(`invalid object key "${key}": expected "namespace/name" or "name"`);
  }
  return { namespace, name };
}
