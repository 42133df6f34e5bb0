/**
 * A namespace's instances as freshly as this replica can tell: a list read from the apiserver (a consistent read,
 * so it shows every write stored before it began), with what the informer cache has shown since. A write stored
 * after the list began (another replica's admission, a tenant's create a moment later) is in the cache, not the
 * list: such a cached instance newer than the list (its resourceVersion past the list's) replaces or joins the
 * list's. Instances the list has and the cache no longer shows stay counted (deleted after it began, or never seen
 * by a lagging cache: either way on the safe side). Pure.
 *
 * resourceVersions are compared as the etcd revisions the apiserver gives; one that is not a decimal integer (an
 * apiserver other than etcd's) counts the cached version, the one the apiserver has given more lately.
 */
import type { MyAppInstanceObject } from "../../api/index.ts";

export function freshestInstances(
  listed: readonly MyAppInstanceObject[],
  listResourceVersion: string | undefined,
  cached: readonly MyAppInstanceObject[],
): readonly MyAppInstanceObject[] {
  const byName = new Map(listed.map((instance) => [instance.metadata.name ?? "", instance]));
  for (const instance of cached) {
    if (newer(instance.metadata.resourceVersion, listResourceVersion))
      byName.set(instance.metadata.name ?? "", instance);
  }
  return [...byName.values()];
}

function newer(version: string | undefined, than: string | undefined): boolean {
  const decimal = /^\d+$/;
  if (version === undefined || than === undefined || !decimal.test(version) || !decimal.test(than)) return true;
  return BigInt(version) > BigInt(than);
}
