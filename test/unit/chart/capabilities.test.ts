/** `.Capabilities` kept for reuse: one read per maxAge, the last good answer through a failed refresh. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cachedCapabilities, type Capabilities } from "../../../chart/index.ts";

describe("cachedCapabilities", () => {
  test("reads once per maxAge, once for concurrent callers, and keeps the last answer when a refresh fails", async () => {
    // GIVEN a cluster read that counts its calls and a clock the test moves
    let now = 0;
    let reads = 0;
    let failing = false;
    const read = cachedCapabilities(
      async (): Promise<Capabilities> => {
        reads += 1;
        if (failing) throw new Error("apiserver down");
        return { kubeVersion: "v1.36.3", apiVersions: [`v1/Read${reads}`] };
      },
      { maxAgeMs: 1000, now: () => now },
    );

    // WHEN several renders ask at once, then again within maxAge
    const [a, b] = await Promise.all([read(), read()]);
    now = 999;
    const c = await read();
    // THEN the cluster was read once
    assert.equal(reads, 1);
    assert.deepEqual(
      [a, b, c].map((x) => x.apiVersions),
      [["v1/Read1"], ["v1/Read1"], ["v1/Read1"]],
    );

    // WHEN maxAge has passed: read again
    now = 1000;
    assert.deepEqual((await read()).apiVersions, ["v1/Read2"]);

    // WHEN a refresh fails: the last good answer, and the next call tries again
    now = 2000;
    failing = true;
    assert.deepEqual((await read()).apiVersions, ["v1/Read2"]);
    failing = false;
    assert.deepEqual((await read()).apiVersions, ["v1/Read4"]);
  });

  test("with no answer yet, a failed read is the caller's error", async () => {
    const read = cachedCapabilities(async () => {
      throw new Error("apiserver down");
    });
    await assert.rejects(read(), /apiserver down/);
  });
});
