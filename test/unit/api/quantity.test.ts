import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  compareQuantities,
  isQuantity,
  parseQuantity,
  unsignedQuantityPattern,
  wholeBytesQuantityPattern,
} from "../../../api/index.ts";

const nanos = (text: string): bigint | undefined => parseQuantity(text)?.nanos;
const giB = 1024n ** 3n * 10n ** 9n;
const maxInt64Nanos = (2n ** 63n - 1n) * 10n ** 9n;

describe("parseQuantity reads what resource.ParseQuantity reads", () => {
  const values: [string, bigint][] = [
    ["0", 0n],
    ["1", 10n ** 9n],
    ["1Gi", giB],
    ["1.5Gi", (giB * 3n) / 2n],
    [".5Gi", giB / 2n],
    ["1G", 10n ** 18n],
    ["500M", 5n * 10n ** 17n],
    ["1k", 10n ** 12n],
    ["1e3", 10n ** 12n],
    ["1E3", 10n ** 12n],
    ["5e+03", 5n * 10n ** 12n],
    ["1e-3", 10n ** 6n],
    ["250m", 25n * 10n ** 7n],
    ["1u", 10n ** 3n],
    ["1n", 1n],
    ["1E", 10n ** 27n],
    ["1.", 10n ** 9n],
    ["-1Gi", -giB],
    ["+1Gi", giB],
    ["007", 7n * 10n ** 9n],
    // ParseQuantity's oddities, kept so both sides agree even on them.
    ["+", 0n],
    [".", 0n],
    ["Ki", 0n],
  ];
  for (const [text, expected] of values) {
    test(`${text} = ${expected}n`, () => assert.equal(nanos(text), expected));
  }

  test("rounds up to 1n, as ParseQuantity does", () => {
    assert.equal(nanos("0.0000000001"), 1n);
    assert.equal(nanos("0.0000000002"), 1n);
    assert.equal(nanos("1.0000000001"), 10n ** 9n + 1n);
    assert.equal(nanos("-0.0000000001"), -1n);
  });

  test("caps binary-SI values at 2^63-1, and only those", () => {
    assert.equal(nanos("8Ei"), maxInt64Nanos);
    assert.equal(nanos("9Ei"), maxInt64Nanos);
    assert.equal(nanos("9223372036854775807Ki"), maxInt64Nanos);
    assert.equal(nanos("7Ei"), 7n * 2n ** 60n * 10n ** 9n);
    assert.equal(nanos("100E"), 10n ** 29n);
  });

  test("reports the notation", () => {
    assert.equal(parseQuantity("1Gi")?.format, "BinarySI");
    assert.equal(parseQuantity("1G")?.format, "DecimalSI");
    assert.equal(parseQuantity("1e9")?.format, "DecimalExponent");
    assert.equal(parseQuantity("0.5Ki")?.format, "BinarySI");
  });

  for (const text of [
    "",
    "1GB",
    "1gi",
    "1K",
    "1e",
    "1e+",
    "1.5.5",
    "1 Gi",
    "Gi1",
    "1Ki3",
    "1e3i",
    "1e1.5",
    "--1",
    "１Gi",
    "Ei",
    "e-10",
  ]) {
    test(`rejects ${JSON.stringify(text)}`, () => assert.equal(parseQuantity(text), undefined));
  }
});

describe("compareQuantities compares values, not notation", () => {
  const cases: [string, string, -1 | 0 | 1][] = [
    ["1Gi", "1024Mi", 0],
    ["1Gi", "1G", 1],
    ["1k", "1e3", 0],
    ["1000m", "1", 0],
    ["2Gi", "1Gi", 1],
    ["9Ei", "8Ei", 0],
    ["9E", "9Ei", -1],
  ];
  for (const [a, b, expected] of cases) {
    test(`${a} vs ${b}`, () => {
      const [qa, qb] = [parseQuantity(a), parseQuantity(b)];
      assert.ok(qa && qb);
      assert.equal(compareQuantities(qa, qb), expected);
      assert.equal(compareQuantities(qb, qa), -expected || 0);
    });
  }
});

describe("unsignedQuantityPattern", () => {
  const pattern = new RegExp(unsignedQuantityPattern);

  test("accepts only strings that parse, so the CEL rules can always read them", () => {
    // GIVEN every short string over the quantity alphabet
    const alphabet = ["0", "1", "9", ".", "e", "E", "+", "-", "i", "K", "M", "G", "m", "k", "n", "u"];
    let strings = [""];
    for (let length = 1; length <= 4; length++) {
      strings = strings.flatMap((prefix) => alphabet.map((char) => prefix + char));
      for (const text of strings) {
        // THEN whatever the pattern accepts, the parser accepts too
        if (pattern.test(text)) assert.ok(isQuantity(text), `${text} matches the pattern but does not parse`);
      }
    }
  });

  test("takes no sign and at most three exponent digits", () => {
    assert.equal(pattern.test("+1Gi"), false);
    assert.equal(pattern.test("-1Gi"), false);
    assert.equal(pattern.test("1e999"), true);
    assert.equal(pattern.test("1e1000"), false);
  });
});

describe("wholeBytesQuantityPattern", () => {
  const pattern = new RegExp(wholeBytesQuantityPattern);

  test("accepts only exact, whole, positive values that parse", () => {
    // GIVEN every short string over the quantity alphabet
    const alphabet = ["0", "1", "9", ".", "e", "E", "+", "-", "i", "K", "M", "G", "m", "k", "n", "u"];
    let strings = [""];
    for (let length = 1; length <= 4; length++) {
      strings = strings.flatMap((prefix) => alphabet.map((char) => prefix + char));
      for (const text of strings) {
        if (!pattern.test(text)) continue;
        // THEN whatever the pattern accepts is at least one byte and a whole number of bytes
        const quantity = parseQuantity(text);
        assert.ok(quantity, `${text} matches the pattern but does not parse`);
        assert.ok(quantity.nanos >= 10n ** 9n, `${text} is less than one byte`);
        assert.equal(quantity.nanos % 10n ** 9n, 0n, `${text} is not whole bytes`);
      }
    }
  });

  test("rejects fractions, sub-byte suffixes, negative exponents and leading zeros", () => {
    for (const text of ["1.5Gi", ".5Gi", "1.", "1500m", "1e-3", "01Gi", "0", "1u"]) {
      assert.equal(pattern.test(text), false, text);
    }
    for (const text of ["1", "1Gi", "1536Mi", "10G", "1e9", "1E+3", "1E"]) assert.equal(pattern.test(text), true, text);
  });
});
