import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { pino } from "pino";
import { boundedLogOptions, maxLogLineLength, maxLoggedStringLength } from "../../../operator/log-bounds.ts";

/** A logger with the operator's bounds, and the lines it wrote, parsed. */
function capture(): { logger: pino.Logger; lines: () => Record<string, unknown>[]; raw: () => string[] } {
  const written: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level: "info", ...boundedLogOptions }, sink);
  const raw = () => written.join("").trim().split("\n");
  return { logger, lines: () => raw().map((line) => JSON.parse(line) as Record<string, unknown>), raw };
}

const long = "x".repeat(1_000_000);

describe("boundedLogOptions", () => {
  test("cuts a long message, a long field and a long error, saying how much was cut", () => {
    const { logger, lines } = capture();
    logger.child({ instance: "shop/web" }).warn({ reason: "ChartRenderFailed", wholeMessage: long }, long);
    logger.error({ err: new Error(long) }, "reconcile failed");
    const [first, second] = lines();
    assert.equal(first?.["instance"], "shop/web");
    assert.equal(first?.["reason"], "ChartRenderFailed");
    for (const text of [first?.["msg"], first?.["wholeMessage"], (second?.["err"] as { message: string }).message]) {
      assert.equal(typeof text, "string");
      assert.ok((text as string).length < maxLoggedStringLength + 64, `${(text as string).length} characters`);
      assert.match(text as string, /… \(983616 more characters\)$/);
    }
    assert.equal((second?.["err"] as { type: string }).type, "Error");
  });

  test("leaves ordinary lines as they are", () => {
    const { logger, lines } = capture();
    const fields = { reason: "Ready", readyReplicas: 2 };
    logger.info(fields, "status Running");
    logger.info("a message alone");
    assert.deepEqual(
      lines().map(({ msg, reason, readyReplicas }) => ({ msg, reason, readyReplicas })),
      [
        { msg: "status Running", reason: "Ready", readyReplicas: 2 },
        { msg: "a message alone", reason: undefined, readyReplicas: undefined },
      ],
    );
  });

  test("logs what is thrown that is not an Error, as pino does", () => {
    const { logger, lines } = capture();
    for (const thrown of [null, "a string", 42, { code: 500 }, long]) logger.warn({ err: thrown }, "failed");
    const errs = lines().map((line) => line["err"]);
    assert.deepEqual(errs.slice(0, 4), [null, "a string", 42, { code: 500 }]);
    assert.match(errs[4] as string, /more characters\)$/);
  });

  test("no line is longer than the bound, whatever nests the text: fields, an error's own fields, bindings", () => {
    const { logger, lines, raw } = capture();
    const apiError = Object.assign(new Error("admission refused"), { causes: [{ message: long }] });
    logger.child({ chart: { template: long } }).warn({ err: apiError, object: { spec: { value: long } } }, "x");
    logger.warn(new Error(long));
    for (const line of raw()) assert.ok(line.length <= maxLogLineLength, `a line of ${line.length} characters`);
    const [first, second] = lines();
    assert.equal(first?.["msg"], "x");
    assert.equal(first?.["logLineCut"] !== undefined, true);
    assert.match((first?.["object"] as { spec: { value: string } }).spec.value, /more characters\)$/);
    assert.equal((first?.["err"] as { message: string }).message, "admission refused");
    assert.equal(typeof second?.["msg"], "string");
  });
});
