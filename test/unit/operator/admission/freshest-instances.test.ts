/** A namespace's instances as a fresh list shows them, with what the cache has shown since it began. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MyAppInstanceObject } from "../../../../api/index.ts";
import { freshestInstances } from "../../../../operator/admission/freshest-instances.ts";

const at = (name: string, resourceVersion: string, replicas = 1) =>
  ({
    metadata: { name, namespace: "team-a", resourceVersion },
    spec: { image: "nginx", replicas },
  }) as unknown as MyAppInstanceObject;

const shown = (instances: readonly MyAppInstanceObject[]) =>
  instances.map((instance) => `${instance.metadata.name}:${instance.spec.replicas}`).sort();

describe("freshestInstances", () => {
  it("takes the list over what a lagging cache still shows, and the cache's writes stored after the list began", () => {
    // GIVEN a list at 100: a shrunk to 1, gone deleted; a cache that still shows both as before, and shows x,
    // another replica's create stored at 101, and b changed at 105
    const listed = [at("a", "90", 1), at("b", "50", 2)];
    const cached = [at("a", "80", 3), at("gone", "70", 2), at("x", "101", 4), at("b", "105", 5)];
    // THEN the list decides what it had seen, the cache what came after
    assert.deepEqual(shown(freshestInstances(listed, "100", cached)), ["a:1", "b:5", "x:4"]);
  });

  it("compares revisions as numbers, not text", () => {
    assert.deepEqual(shown(freshestInstances([at("a", "9", 1)], "9", [at("a", "10", 2)])), ["a:2"]);
    assert.deepEqual(shown(freshestInstances([at("a", "10", 1)], "10", [at("a", "9", 2)])), ["a:1"]);
  });

  it("counts the cached version where a revision is not a number it can compare (the safe side)", () => {
    assert.deepEqual(shown(freshestInstances([at("a", "x1", 1)], "x9", [at("a", "x2", 2)])), ["a:2"]);
    assert.deepEqual(shown(freshestInstances([], undefined, [at("a", "5", 2)])), ["a:2"]);
  });
});
