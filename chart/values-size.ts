/**
 * How large `spec.values` may be (`--render-values`, MyAppOperator `renderLimits.valuesKiB`). The values are the
 * one field of an instance a tenant may fill freely (etcd takes up to ~1.5 MiB), and the shared operator keeps
 * every instance in memory and hands the values to helm: the limit bounds both. Measured as the bytes of the
 * values' compact JSON in UTF-8, what `JSON.stringify` writes, a figure a user can check with `jq -c .spec.values |
 * wc -c` (give or take the escapes of `<`, `>` and `&`). Pure.
 */

/**
 * Bytes of `values` as compact JSON (UTF-8), as `JSON.stringify` writes them; 0 when there are none.
 * `JSON.stringify` is 3–15× faster than counting by hand, but recurses: values stored while the webhooks were off
 * may nest thousands of levels deep, past its stack (api/chart.ts `maxValuesDepth`), and those are counted by hand.
 */
export function valuesBytes(values: unknown): number {
  if (values === undefined) return 0;
  try {
    return Buffer.byteLength(JSON.stringify(values) ?? "", "utf8");
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return countedBytes(values);
  }
}

/** {@link valuesBytes} counted iteratively: only leaves and keys are stringified. */
function countedBytes(values: unknown): number {
  let bytes = 0;
  const pending: unknown[] = [values];
  for (let value = pending.pop(); value !== undefined; value = pending.pop()) {
    if (typeof value !== "object" || value === null) {
      bytes += jsonBytes(value);
      continue;
    }
    // Brackets, and a comma between each two members.
    if (Array.isArray(value)) {
      bytes += 2 + Math.max(0, value.length - 1);
      for (const item of value) pending.push(item === undefined ? null : item);
      continue;
    }
    const entries = Object.entries(value).filter(([, member]) => member !== undefined);
    bytes += 2 + Math.max(0, entries.length - 1);
    for (const [key, member] of entries) {
      bytes += jsonBytes(key) + 1; // "key":
      pending.push(member);
    }
  }
  return bytes;
}

/** A leaf (or key) as JSON text, in UTF-8 bytes. */
function jsonBytes(leaf: unknown): number {
  return Buffer.byteLength(JSON.stringify(leaf) ?? "null", "utf8");
}

/** The flag that sets the limit, named in every refusal so a platform knows what to widen. */
export const valuesLimitFlag = "--render-values";

/** "is 200 KiB as JSON; the platform allows at most 128 KiB (--render-values)". */
export function valuesTooLargeMessage(bytes: number, limitKiB: number): string {
  return `is ${formatKiB(bytes)} as JSON; the platform allows at most ${limitKiB} KiB (${valuesLimitFlag})`;
}

/** 204800 → "200 KiB", 131073 → "128.1 KiB": one decimal, and only where it tells the size from the limit. */
function formatKiB(bytes: number): string {
  const kib = bytes / 1024;
  return Number.isInteger(kib) ? `${kib} KiB` : `${(Math.ceil(kib * 10) / 10).toFixed(1)} KiB`;
}
