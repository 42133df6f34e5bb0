/**
 * Kubernetes resource quantities ("1Gi", "500M", "1.5e3", "250m"), parsed and compared exactly as
 * `k8s.io/apimachinery/pkg/api/resource.ParseQuantity` and `Quantity.Cmp` do, because the CRD's CEL rules use
 * that code (`quantity(self).compareTo(...)`) and our TS checks must reach the same verdict.
 */

/** How the quantity was written; the apiserver caps only binary-SI values. */
export type QuantityFormat = "DecimalSI" | "BinarySI" | "DecimalExponent";

/** A parsed quantity: its exact value in nano-units (value × 10⁹), after the apiserver's rounding and cap. */
export interface Quantity {
  /** The value × 10⁹, rounded away from zero to a whole number, as `ParseQuantity` rounds to 1n. */
  readonly nanos: bigint;
  /** The notation the quantity was written in. */
  readonly format: QuantityFormat;
}

/**
 * The unsigned quantities we accept for storage sizes: digits with an optional fraction, then a binary-SI
 * suffix (Ki, Mi, Gi, Ti, Pi, Ei), a decimal-SI suffix (n, u, m, k, M, G, T, P, E) or a decimal exponent of
 * at most three digits (e3, E-2). Every string it matches parses in `ParseQuantity`, so the CEL rules never
 * see a string they cannot read. No lookarounds: the apiserver compiles it with Go's RE2.
 */
export const unsignedQuantityPattern =
  "^(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,3})?$";

/**
 * The storage sizes we accept: a whole number of bytes written without a fraction, a negative exponent or a
 * sub-unit suffix (m, u, n), and without leading zeros: digits, then a binary-SI suffix (Ki ... Ei), a decimal-SI
 * suffix (k, M, G, T, P, E) or a non-negative decimal exponent of at most three digits (e3, E+6). Such a value
 * is at least 1 byte and exact, so the apiserver stores it as written and never rounds it (Kubernetes' own
 * canonical form has no fraction either). A subset of {@link unsignedQuantityPattern}: every match parses.
 */
export const wholeBytesQuantityPattern = "^[1-9][0-9]*(?:[KMGTPE]i|[kMGTPE]|[eE]\\+?[0-9]{1,3})?$";

// ParseQuantity's grammar: optional sign, digits, optional fraction, optional suffix; "+", "." and "Ki" read as 0.
const grammar = /^([+-]?)([0-9]*)(?:\.([0-9]*))?((?:[KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

const decimalSuffixes: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const binarySuffixes: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/**
 * The longest quantity text the platform parses where a tenant writes it (a chart's claim sizes and resources):
 * longer than any a person writes, while the parser's cost grows with the digits (a million cost ~50 ms).
 */
export const maxQuantityLength = 64;

// Exponents beyond this are legal in Go but only as int32 wrap-around curiosities; nobody means them.
const maxExponent = 999;

// resource.maxAllowed: the cap ParseQuantity puts on binary-SI values, in nano-units.
const maxBinaryNanos = (2n ** 63n - 1n) * 10n ** 9n;

/**
 * A storage limit (a policy's flag or argument, a namespace's budget label): a quantity of at least `minimum`
 * bytes, surrounding blanks ignored. Undefined when it is not one.
 */
export function parseStorageLimit(text: string, minimum: 0 | 1): Quantity | undefined {
  const quantity = parseQuantity(text.trim());
  if (!quantity || quantity.nanos < BigInt(minimum) * 10n ** 9n) return undefined;
  return quantity;
}

/** Parses a quantity the way the apiserver does; `undefined` where `ParseQuantity` would return an error. */
export function parseQuantity(text: string): Quantity | undefined {
  const match = text === "" ? null : grammar.exec(text);
  if (!match) return undefined;
  const [, sign = "", whole = "", fraction = "", suffix = ""] = match;

  let format: QuantityFormat;
  let exponent10 = 0;
  let exponent2 = 0;
  if (suffix in binarySuffixes) {
    format = "BinarySI";
    exponent2 = binarySuffixes[suffix] ?? 0;
  } else if (suffix in decimalSuffixes) {
    format = "DecimalSI";
    exponent10 = decimalSuffixes[suffix] ?? 0;
  } else {
    format = "DecimalExponent";
    exponent10 = Number.parseInt(suffix.slice(1), 10);
    if (Math.abs(exponent10) > maxExponent) return undefined;
  }

  // Without any digit ParseQuantity has only its int64 fast path: where that path does not apply, it fails.
  if (whole === "" && fraction === "" && !hasFastPath(format, exponent10, exponent2)) return undefined;

  // value = digits × 10^(exponent10 - fraction.length) × 2^exponent2; nanos = value × 10^9, rounded up.
  const digits = BigInt((whole + fraction).replace(/^0+/, "") || "0");
  const shift = exponent10 - fraction.length + 9;
  const scaled = digits * 2n ** BigInt(exponent2);
  let nanos = shift >= 0 ? scaled * 10n ** BigInt(shift) : ceilDiv(scaled, 10n ** BigInt(-shift));
  if (format === "BinarySI" && nanos > maxBinaryNanos) nanos = maxBinaryNanos;
  // A fraction below 1 needs no binary notation; ParseQuantity switches such values to decimal.
  if (format === "BinarySI" && nanos < 10n ** 9n && nanos > 0n) format = "DecimalSI";
  return { nanos: sign === "-" ? -nanos : nanos, format };
}

/** True when the apiserver's `isQuantity()` would be true. */
export function isQuantity(text: string): boolean {
  return parseQuantity(text) !== undefined;
}

/** -1, 0 or 1, as CEL's `quantity(a).compareTo(quantity(b))`. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  if (a.nanos === b.nanos) return 0;
  return a.nanos < b.nanos ? -1 : 1;
}

const binaryUnits: readonly [string, bigint][] = [
  ["Ei", 2n ** 60n],
  ["Pi", 2n ** 50n],
  ["Ti", 2n ** 40n],
  ["Gi", 2n ** 30n],
  ["Mi", 2n ** 20n],
  ["Ki", 2n ** 10n],
];
const decimalUnits: readonly [string, bigint][] = [
  ["E", 10n ** 18n],
  ["P", 10n ** 15n],
  ["T", 10n ** 12n],
  ["G", 10n ** 9n],
  ["M", 10n ** 6n],
  ["k", 10n ** 3n],
];

/** Nano-bytes as the shortest exact quantity (`90Gi`, `2T`, `1500M`, `0`), binary units first on a tie. */
export function formatBytes(nanos: bigint): string {
  const bytes = (nanos + 10n ** 9n - 1n) / 10n ** 9n;
  if (bytes === 0n) return "0";
  const exact = [...binaryUnits, ...decimalUnits]
    .filter(([, size]) => bytes % size === 0n)
    .map(([suffix, size]) => `${bytes / size}${suffix}`);
  return [...exact, String(bytes)].reduce((best, text) => (text.length < best.length ? text : best));
}

// ParseQuantity's precision check for a digit-less value ("Ki", ".", "+e3"), which it reads as "0".
function hasFastPath(format: QuantityFormat, exponent10: number, exponent2: number): boolean {
  if (format === "BinarySI") return 15 - 1 - Math.trunc((exponent2 * 3) / 10) - 1 >= 0;
  return exponent10 >= -9;
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}
