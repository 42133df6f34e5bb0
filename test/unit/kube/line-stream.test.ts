import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LineSplitter } from "../../../kube/line-stream.ts";

const encoder = new TextEncoder();

/** The lines of `bytes` pushed in pieces cut at the byte offsets `cuts`. */
function split(bytes: Uint8Array, cuts: readonly number[] = []): string[] {
  const splitter = new LineSplitter();
  const lines: string[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    lines.push(...splitter.push(bytes.subarray(from, cut)));
    from = cut;
  }
  return lines;
}

/**
 * Runs `body` while counting the characters String#indexOf("\n") reads (up to its match, or the whole string) and
 * the calls to Array#join: the work of splitting, counted rather than timed.
 */
function counting(body: () => void): { scanned: number; joins: number } {
  const counts = { scanned: 0, joins: 0 };
  const { indexOf } = String.prototype;
  const { join } = Array.prototype;
  String.prototype.indexOf = function (this: string, search: string, position?: number): number {
    const found = indexOf.call(this, search, position);
    if (search === "\n") counts.scanned += (found === -1 ? this.length : found + 1) - (position ?? 0);
    return found;
  };
  Array.prototype.join = function (this: unknown[], separator?: string): string {
    counts.joins++;
    return join.call(this, separator);
  };
  try {
    body();
  } finally {
    String.prototype.indexOf = indexOf;
    Array.prototype.join = join;
  }
  return counts;
}

describe("LineSplitter", () => {
  it("hands over each line whole, wherever the stream is cut", () => {
    // GIVEN lines with multi-byte characters (2, 3 and 4 bytes), a CRLF, empty lines and an unterminated tail
    const text = '{"a":"naïve ✓ 😀"}\r\n\n{"b":[1,2]}\n😀😀\n\nno newline yet';
    const bytes = encoder.encode(text);
    const expected = ['{"a":"naïve ✓ 😀"}\r', "", '{"b":[1,2]}', "😀😀", ""];
    // WHEN it arrives whole, cut once at every byte, or one byte at a time
    // THEN the same lines come out, characters cut between chunks decoded whole, the tail held back
    assert.deepEqual(split(bytes), expected);
    for (let cut = 0; cut <= bytes.length; cut++) assert.deepEqual(split(bytes, [cut]), expected, `cut at ${cut}`);
    const everyByte = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    assert.deepEqual(split(bytes, everyByte), expected, "one byte at a time");
  });

  it("hands over several lines of one chunk, and keeps nothing after a chunk that ends on a newline", () => {
    const splitter = new LineSplitter();
    // GIVEN a chunk of three whole lines
    assert.deepEqual(splitter.push(encoder.encode("a\nb\nc\n")), ["a", "b", "c"]);
    // WHEN empty chunks come, then a line in two pieces
    assert.deepEqual(splitter.push(new Uint8Array()), []);
    assert.deepEqual(splitter.push(encoder.encode("d")), []);
    assert.deepEqual(splitter.push(new Uint8Array()), []);
    // THEN the line is its two pieces only, and a newline alone ends the line held
    assert.deepEqual(splitter.push(encoder.encode("e\nf")), ["de"]);
    assert.deepEqual(splitter.push(encoder.encode("\n")), ["f"]);
    assert.deepEqual(splitter.push(encoder.encode("\n")), [""]);
  });

  it("holds a character whose bytes are cut across three chunks until it is whole", () => {
    const splitter = new LineSplitter();
    const smile = encoder.encode("😀\n");
    assert.deepEqual(splitter.push(smile.subarray(0, 1)), []);
    assert.deepEqual(splitter.push(smile.subarray(1, 3)), []);
    assert.deepEqual(splitter.push(smile.subarray(3)), ["😀"]);
  });

  it("reads a 4 MiB line in 16 KiB chunks in one pass: each character searched once, one join", () => {
    // GIVEN one 4 MiB line (an object near the apiserver's limits) and the next line, arriving in 16 KiB chunks
    const line = JSON.stringify({ metadata: { finalizers: Array.from({ length: 140_000 }, (_, i) => `f/${i}`) } });
    const text = `${line.padEnd(4 * 1024 * 1024, " ")}\n{"next":1}\n`;
    const bytes = encoder.encode(text);
    const cuts = Array.from({ length: Math.ceil(bytes.length / 16384) - 1 }, (_, i) => (i + 1) * 16384);
    // WHEN it is split
    let lines: string[] = [];
    const { scanned, joins } = counting(() => (lines = split(bytes, cuts)));
    // THEN the work is linear in the bytes: searching the whole buffer on every chunk would read ~256 times as much
    assert.deepEqual(
      lines.map((l) => l.length),
      [4 * 1024 * 1024, '{"next":1}'.length],
    );
    assert.equal(lines[0]?.trimEnd(), line);
    assert.ok(scanned <= text.length, `${scanned} characters searched for ${text.length}`);
    assert.equal(joins, 1, "the pieces of the long line are joined once");
  });
});
