/** `.Capabilities` kept for reuse: one read per maxAge, the last good answer through a failed refresh. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cachedCapabilities, type Capabilities } from "../../../chart/index.ts";
import { FakeClock } from "../runtime/fake-clock.ts";

describe("cachedCapabilities", () => {
  test("reads once per maxAge, once for concurrent callers, and keeps the last answer when a refresh fails", async () => {
    // GIVEN a cluster read that counts its calls and a clock the test moves
    const clock = new FakeClock();
    let reads = 0;
    let failing = false;
    const read = cachedCapabilities(
      async (): Promise<Capabilities> => {
        reads += 1;
        if (failing) throw new Error("apiserver down");
        return { kubeVersion: "v1.36.3", apiVersions: [`v1/Read${reads}`] };
      },
      { maxAgeMs: 1000, clock },
    );

    // WHEN several renders ask at once, then again within maxAge
    const [a, b] = await Promise.all([read(), read()]);
    await clock.advance(999);
    clock.jumpWall(-3_600_000); // an NTP step back: ages are monotonic, it changes nothing
    const c = await read();
    // THEN the cluster was read once
    assert.equal(reads, 1);
    assert.deepEqual(
      [a, b, c].map((x) => x.apiVersions),
      [["v1/Read1"], ["v1/Read1"], ["v1/Read1"]],
    );

    // WHEN maxAge has passed: read again
    await clock.advance(1);
    assert.deepEqual((await read()).apiVersions, ["v1/Read2"]);

    // WHEN a refresh fails: the last good answer, and the next call tries again
    await clock.advance(1000);
    failing = true;
    assert.deepEqual((await read()).apiVersions, ["v1/Read2"]);
    failing = false;
    assert.deepEqual((await read()).apiVersions, ["v1/Read4"]);
  });

  test("with no answer yet, a failed read is the caller's error", async () => {
    const read = cachedCapabilities(
      async () => {
        throw new Error("apiserver down");
      },
      { clock: new FakeClock() },
    );
    await assert.rejects(read(), /apiserver down/);
  });
});
