/**
 * A least-recently-used cache bounded by the bytes its values take, not by their count: a thousand small renders
 * fit where ten huge ones do, and one entry larger than the whole budget is simply not kept. Used for renders and
 * fetched charts. Pure (no I/O); a Map keeps insertion order, so re-inserting on a hit makes it the newest.
 */
export class ByteBoundedLru<V> {
  readonly #entries = new Map<string, { readonly value: V; readonly bytes: number }>();
  readonly #sizeOf: (value: V) => number;
  #bytes = 0;
  /** The most the values may take together. */
  readonly maxBytes: number;

  /** @param sizeOf the bytes one value takes (an estimate is fine: the bound is for memory, not accounting) */
  constructor(maxBytes: number, sizeOf: (value: V) => number) {
    this.maxBytes = maxBytes;
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

  /** Keeps `value` under `key`, dropping the least recently used entries until the total fits. */
  set(key: string, value: V): void {
    this.delete(key);
    const bytes = this.#sizeOf(value);
    if (bytes > this.maxBytes) return;
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  /** Entries kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes the kept values take. */
  get bytes(): number {
    return this.#bytes;
  }
}
