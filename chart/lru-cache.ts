/**
 * The share of a cache the operator keeps for every tenant (renders, fetched charts) that one namespace's entries
 * may take: a tenant's large entries push out its own older ones, not every other tenant's, whose instances would
 * otherwise run helm or fetch their chart again on their next reconcile.
 */
export const namespaceCacheShare = 1 / 4;

/**
 * The bytes one namespace's entries may take in a cache of `cacheBytes`: its share, or the largest entry the limits
 * allow if that is more, so an entry at the cap is always kept (up to the whole cache) and a tenant at the cap is
 * not rendering or fetching again on every reconcile.
 */
export function namespaceShareBytes(cacheBytes: number, largestEntryBytes: number): number {
  return Math.max(cacheBytes * namespaceCacheShare, largestEntryBytes);
}

/**
 * A least-recently-used cache bounded by the bytes its values take, not by their count: a thousand small renders
 * fit where ten huge ones do, and one entry larger than the whole budget is simply not kept. Used for renders and
 * fetched charts. Entries may belong to a group (a namespace) whose entries together take at most a share of the
 * budget: a tenant's large entries then push out its own older ones, never everyone else's. Pure (no I/O); a Map
 * keeps insertion order, so re-inserting on a hit makes it the newest.
 */
export class ByteBoundedLru<V> {
  readonly #entries = new Map<string, { readonly value: V; readonly bytes: number; readonly group?: string }>();
  readonly #groupBytes = new Map<string, number>();
  readonly #sizeOf: (value: V) => number;
  #bytes = 0;
  /** The most the values may take together. */
  readonly maxBytes: number;
  /** The most the values of one group may take together. */
  readonly maxGroupBytes: number;

  /**
   * @param sizeOf the bytes one value takes (an estimate is fine: the bound is for memory, not accounting)
   * @param maxGroupBytes the most one group's values may take (default: the whole budget)
   */
  constructor(maxBytes: number, sizeOf: (value: V) => number, maxGroupBytes = maxBytes) {
    this.maxBytes = maxBytes;
    this.maxGroupBytes = Math.min(maxGroupBytes, maxBytes);
    this.#sizeOf = sizeOf;
  }

  /** The value for `key`, which becomes the most recently used. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /**
   * Keeps `value` under `key` (in `group`, if given), dropping the group's least recently used entries until the
   * group fits its share, then anyone's until the total fits.
   */
  set(key: string, value: V, group?: string): void {
    this.delete(key);
    const bytes = this.#sizeOf(value);
    if (bytes > (group === undefined ? this.maxBytes : this.maxGroupBytes)) return;
    if (group !== undefined) {
      for (const [oldest, entry] of this.#entries) {
        if ((this.#groupBytes.get(group) ?? 0) + bytes <= this.maxGroupBytes) break;
        if (entry.group === group) this.delete(oldest);
      }
    }
    this.#entries.set(key, group === undefined ? { value, bytes } : { value, bytes, group });
    this.#count(group, bytes);
    for (const [oldest] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#count(entry.group, -entry.bytes);
  }

  /** Entries kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes the kept values take. */
  get bytes(): number {
    return this.#bytes;
  }

  #count(group: string | undefined, bytes: number): void {
    this.#bytes += bytes;
    if (group === undefined) return;
    const total = (this.#groupBytes.get(group) ?? 0) + bytes;
    if (total === 0) this.#groupBytes.delete(group);
    else this.#groupBytes.set(group, total);
  }
}
