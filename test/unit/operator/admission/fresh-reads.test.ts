/** Reads at least as fresh as the call, shared: at most one running and one waiting per key. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { freshReads } from "../../../../operator/admission/fresh-reads.ts";
import { FakeClock, settle } from "../../runtime/fake-clock.ts";

/** A read per key whose answers the test gives by hand, in the order the reads began. */
function manualReads() {
  const begun: { key: string; answer: (value: number) => void; fail: (error: Error) => void }[] = [];
  const read = (key: string) =>
    new Promise<number>((answer, fail) => {
      begun.push({ key, answer, fail });
    });
  return { begun, read };
}

describe("freshReads", () => {
  it("starts a read for the first caller, and shares the next read among callers while one runs", async () => {
    const { begun, read } = manualReads();
    const fresh = freshReads(read);
    const first = fresh("team-a");
    await settle();
    // GIVEN a read running, begun before what the next callers may need to see
    const later = Array.from({ length: 100 }, () => fresh("team-a"));
    await settle();
    assert.equal(begun.length, 1, "the waiting callers begin nothing while one runs");
    // WHEN it ends THEN one read begins for all who called meanwhile, and they get its answer, not the first's
    begun[0]!.answer(1);
    assert.equal(await first, 1);
    await settle();
    assert.equal(begun.length, 2);
    begun[1]!.answer(2);
    assert.deepEqual(new Set(await Promise.all(later)), new Set([2]));
    // AND a caller after that begins a read of its own
    const last = fresh("team-a");
    await settle();
    assert.equal(begun.length, 3);
    begun[2]!.answer(3);
    assert.equal(await last, 3);
  });

  it("keeps keys apart, and does not keep a failure for later callers", async () => {
    const { begun, read } = manualReads();
    const fresh = freshReads(read);
    const a = fresh("team-a");
    const b = fresh("team-b");
    await settle();
    assert.deepEqual(
      begun.map((reading) => reading.key),
      ["team-a", "team-b"],
    );
    begun[0]!.fail(new Error("connection refused"));
    begun[1]!.answer(7);
    await assert.rejects(a, /connection refused/);
    assert.equal(await b, 7);
    const again = fresh("team-a");
    await settle();
    begun[2]!.answer(8);
    assert.equal(await again, 8);
  });

  it("a failed running read still lets the waiting callers' read begin", async () => {
    const { begun, read } = manualReads();
    const fresh = freshReads(read);
    const first = fresh("team-a");
    await settle();
    const waiting = fresh("team-a");
    begun[0]!.fail(new Error("timeout"));
    await assert.rejects(first, /timeout/);
    await settle();
    begun[1]!.answer(5);
    assert.equal(await waiting, 5);
  });

  it("with a gap, begins a key's reads at least that far apart, shared by the callers meanwhile", async () => {
    const { begun, read } = manualReads();
    const clock = new FakeClock();
    const fresh = freshReads(read, { minGapMs: 200, clock });
    // GIVEN a read that began and ended at once
    const first = fresh("team-a");
    await settle();
    begun[0]!.answer(1);
    assert.equal(await first, 1);
    // WHEN refusals keep coming THEN the next read waits out the gap, and every caller meanwhile shares it
    const burst = Array.from({ length: 50 }, () => fresh("team-a"));
    await clock.advance(199);
    assert.equal(begun.length, 1, "nothing begins within 200 ms of the last read");
    const other = fresh("team-b");
    await settle();
    assert.equal(begun.length, 2, "another key waits for no one");
    await clock.advance(1);
    assert.deepEqual(
      begun.map((reading) => reading.key),
      ["team-a", "team-b", "team-a"],
    );
    begun[2]!.answer(2);
    assert.deepEqual(new Set(await Promise.all(burst)), new Set([2]));
    begun[1]!.answer(3);
    assert.equal(await other, 3);
  });
});
