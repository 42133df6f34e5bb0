import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, it } from "node:test";
import { exitWhenEngineGone, inDynamicProviderHost } from "../../../provider/engine-watch.ts";

/** Resolves once `predicate` holds, polling on the event loop (the watch's timer is real); fails after 30 s. */
async function eventually(predicate: () => boolean, what = "condition"): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (!predicate()) {
    assert.ok(performance.now() < deadline, `${what} never held`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe("exitWhenEngineGone", () => {
  it("exits once when a write to the engine's pipe fails with EPIPE, however often it fails", () => {
    // GIVEN the provider's stdout and stderr, whose reader (the engine) was SIGKILLed
    const stdout = new EventEmitter();
    const stderr = new EventEmitter();
    const exits: number[] = [];
    const watch = exitWhenEngineGone({ streams: [stdout, stderr], parentPid: () => 42, exit: (c) => exits.push(c) });
    // WHEN the next progress line fails, and so does everything after it
    const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
    stdout.emit("error", epipe);
    stderr.emit("error", epipe);
    stdout.emit("error", epipe);
    // THEN the process exits, once, instead of looping on uncaught errors
    assert.deepEqual(exits, [1]);
    watch.stop();
  });

  it("exits when the parent (the engine) is gone, even if nothing is written", async () => {
    let parent = 42;
    let looks = 0;
    const exits: number[] = [];
    const watch = exitWhenEngineGone({
      streams: [],
      parentPid: () => (looks++, parent),
      intervalMs: 1,
      exit: (c) => exits.push(c),
    });
    // GIVEN the same parent, looked at 10 times after the one look that took it for the engine
    await eventually(() => exits.length > 0 || looks >= 11, "10 looks at the parent");
    assert.deepEqual(exits, [], "the same parent: keep running");
    // WHEN the engine dies and the process is re-parented to init
    parent = 1;
    await eventually(() => exits.length > 0);
    assert.deepEqual(exits, [1]);
    watch.stop();
  });

  it("recognises Pulumi's dynamic-provider host, and only it", () => {
    const host = "/w/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js";
    assert.equal(inDynamicProviderHost(["/usr/bin/node", host, "127.0.0.1:4000"]), true);
    assert.equal(inDynamicProviderHost(["/usr/bin/node", "/w/node_modules/@pulumi/pulumi/cmd/dynamic-provider"]), true);
    assert.equal(inDynamicProviderHost(["/usr/bin/node", "/w/test/unit/provider/engine-watch.test.ts"]), false);
    assert.equal(inDynamicProviderHost(["/usr/bin/node"]), false);
  });
});
