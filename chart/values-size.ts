/**
 * How large `spec.values` may be (`--render-values`, MyAppOperator `renderLimits.valuesKiB`). The values are the
 * one field of an instance a tenant may fill freely (etcd takes up to ~1.5 MiB), and the shared operator keeps
 * every instance in memory and hands the values to helm: the limit bounds both. Measured as the bytes of the
 * values' compact JSON in UTF-8, what `JSON.stringify` writes, a figure a user can check with `jq -c .spec.values |
 * wc -c` (give or take the escapes of `<`, `>` and `&`). Pure.
 */

/** Bytes of `values` as compact JSON (UTF-8); 0 when there are none. */
export function valuesBytes(values: unknown): number {
  if (values === undefined) return 0;
  return Buffer.byteLength(JSON.stringify(values) ?? "", "utf8");
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
