import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recentReads } from "../../../../operator/admission/recent-reads.ts";

describe("recentReads", () => {
  it("reuses an answer for its ttl, then reads again", async () => {
    let now = 0;
    const reads: string[] = [];
    const read = recentReads(
      async (key) => {
        reads.push(key);
        return `${key}@${now}`;
      },
      { ttlMs: 5_000, clock: { monotonicMs: () => now } },
    );
    assert.equal(await read("shop"), "shop@0");
    now = 4_999;
    assert.equal(await read("shop"), "shop@0");
    now = 5_000;
    assert.equal(await read("shop"), "shop@5000");
    assert.deepEqual(reads, ["shop", "shop"]);
  });

  it("shares one request among concurrent reads, and keeps no failure", async () => {
    let calls = 0;
    let fail = true;
    const read = recentReads(async (key) => {
      calls += 1;
      await Promise.resolve();
      if (fail) throw new Error(`no ${key}`);
      return key;
    });
    const both = await Promise.allSettled([read("a"), read("a")]);
    assert.deepEqual(
      both.map((result) => result.status),
      ["rejected", "rejected"],
    );
    assert.equal(calls, 1);
    fail = false;
    assert.equal(await read("a"), "a", "the failure was not kept");
    assert.equal(calls, 2);
  });

  it("keeps at most maxEntries, dropping the oldest", async () => {
    const reads: string[] = [];
    const read = recentReads(
      async (key) => {
        reads.push(key);
        return key;
      },
      { maxEntries: 2 },
    );
    for (const key of ["a", "b", "c", "b", "a"]) await read(key);
    assert.deepEqual(reads, ["a", "b", "c", "a"]);
  });
});
