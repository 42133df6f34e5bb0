import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Sightings } from "../../../operator/reconcile/index.ts";

describe("Sightings", () => {
  it("counts from the first sighting until the pods are complete, then starts again", () => {
    const sightings = new Sightings(20_000);
    assert.equal(sightings.seenFor("a", 1000), 0);
    assert.equal(sightings.seenFor("a", 4000), 3000);
    assert.equal(sightings.seenFor("a", 6000), 5000);
    sightings.passed("a");
    assert.equal(sightings.seenFor("a", 7000), 0);
  });

  it("forgets StatefulSets not seen again for longer than its bound, keeps those seen every poll", () => {
    const sightings = new Sightings(20_000);
    sightings.seenFor("gone", 0);
    for (let at = 0; at <= 30_000; at += 5000) sightings.seenFor("stuck", at);
    // "gone" was last seen 30 s ago: dropped; "stuck" keeps its first sighting
    assert.equal(sightings.size, 1);
    assert.equal(sightings.seenFor("stuck", 35_000), 35_000);
    assert.equal(sightings.seenFor("gone", 35_000), 0);
  });

  it("refuses a bound that is not a positive number of ms", () => {
    assert.throws(() => new Sightings(0), /forgetAfterMs must be a positive number of ms, got 0/);
  });
});
