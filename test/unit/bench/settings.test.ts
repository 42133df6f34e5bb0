/** BENCH_* knobs: a positive integer in decimal digits, else an error naming the variable. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { integerSetting } from "../../../bench/support/settings.ts";

describe("integerSetting", () => {
  it("reads decimal digits; unset or empty is the fallback", () => {
    assert.equal(integerSetting("BENCH_X", 7, { BENCH_X: "12" }), 12);
    assert.equal(integerSetting("BENCH_X", 7, {}), 7);
    assert.equal(integerSetting("BENCH_X", 7, { BENCH_X: "" }), 7);
  });

  it("refuses what Number() alone would take, naming the variable, as the operator's flags do", () => {
    // GIVEN hex, an exponent, blanks, a fraction, 0 and a number past the largest safe integer
    for (const raw of ["0x10", "1e3", " 3", "3 ", "1.5", "0", "-2", "9007199254740992"]) {
      // THEN each is refused, naming the variable and what it takes
      assert.throws(
        () => integerSetting("BENCH_INSTANCES", 50, { BENCH_INSTANCES: raw }),
        new RegExp(
          `^Error: BENCH_INSTANCES must be a positive integer \\(decimal digits, at most 9007199254740991\\), got "${raw.replace(".", "\\.")}"$`,
        ),
        raw,
      );
    }
  });
});
