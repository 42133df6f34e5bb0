import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, it } from "node:test";
import { onTerminationSignal, shutdownGracefully } from "../../../operator/runtime/shutdown.ts";
import { captureLogger } from "./capture-logger.ts";

describe("shutdownGracefully", () => {
  it("stops intake, drains, then releases the lease, then closes the server", async () => {
    const steps: string[] = [];
    const result = await shutdownGracefully(
      {
        informers: [{ stop: async () => void steps.push("informer") }],
        controllers: [
          {
            shutdown: async (deadlineMs) => {
              steps.push(`drain ${deadlineMs}`);
              return true;
            },
          },
        ],
        elector: { stop: async (options) => void steps.push(`stop elector release=${options?.release}`) },
        server: { close: async () => void steps.push("close server") },
      },
      { drainTimeoutMs: 7_000, logger: captureLogger().logger },
    );
    assert.deepEqual(steps, ["informer", "drain 7000", "stop elector release=true", "close server"]);
    assert.deepEqual(result, { drained: true });
  });

  it("keeps the lease (to expire) when draining times out, and survives a failing step", async () => {
    const steps: string[] = [];
    const { logger, lines } = captureLogger();
    const result = await shutdownGracefully(
      {
        informers: [
          {
            stop: async () => {
              throw new Error("watch already gone");
            },
          },
        ],
        controllers: [{ shutdown: async () => false }],
        elector: { stop: async (options) => void steps.push(`stop elector release=${options?.release}`) },
      },
      { logger },
    );
    // GIVEN a reconcile still running THEN the elector stops campaigning but does not hand the lease over
    assert.deepEqual(steps, ["stop elector release=false"]);
    assert.deepEqual(result, { drained: false });
    assert.ok(lines.some((l) => l.msg === "shutdown step failed" && l.step === "informers"));
  });
});

describe("onTerminationSignal", () => {
  it("runs the handler once for the first signal and escalates on a second", () => {
    const source = new EventEmitter();
    const handled: string[] = [];
    const repeated: string[] = [];
    const dispose = onTerminationSignal((signal) => void handled.push(signal), {
      source,
      onRepeat: (signal) => void repeated.push(signal),
    });
    source.emit("SIGTERM", "SIGTERM");
    source.emit("SIGINT", "SIGINT");
    assert.deepEqual(handled, ["SIGTERM"]);
    assert.deepEqual(repeated, ["SIGINT"]);
    dispose();
    assert.equal(source.listenerCount("SIGTERM"), 0);
  });
});
