import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { pino } from "pino";
import { boundedLogOptions, maxLoggedStringLength } from "../../../operator/log-bounds.ts";

/** A logger with the operator's bounds, and the lines it wrote, parsed. */
function capture(): { logger: pino.Logger; lines: () => Record<string, unknown>[] } {
  const written: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level: "info", ...boundedLogOptions }, sink);
  return {
    logger,
    lines: () =>
      written
        .join("")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
  };
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
});
