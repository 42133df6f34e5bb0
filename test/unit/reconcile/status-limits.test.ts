import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { validateStatus, type MyAppInstanceStatus } from "../../../api/index.ts";
import { clippedMessage, statusMessageLength, withinStatusLimits } from "../../../operator/reconcile/status-limits.ts";

const characters = (text: string | undefined) => Array.from(text ?? "").length;

describe("clippedMessage", () => {
  it("keeps a message of at most 4,096 characters as it is, counting code points as the apiserver does", () => {
    assert.equal(clippedMessage("x".repeat(statusMessageLength)), "x".repeat(statusMessageLength));
    // 4,096 emoji are 8,192 UTF-16 units: still 4,096 characters.
    assert.equal(clippedMessage("🚀".repeat(statusMessageLength)), "🚀".repeat(statusMessageLength));
  });

  it("cuts a longer one to exactly the limit, saying how much was cut", () => {
    const clipped = clippedMessage("x".repeat(40_000));
    assert.equal(characters(clipped), statusMessageLength);
    const cut = /^x+ … \((\d+) more characters\)$/.exec(clipped);
    assert.ok(cut, clipped.slice(-60));
    assert.equal(clipped.indexOf(" ") + Number(cut[1]), 40_000);
  });

  it("never splits a character in two", () => {
    const clipped = clippedMessage("🚀".repeat(5000), 100);
    assert.equal(characters(clipped), 100);
    assert.ok(clipped.isWellFormed(), "no lone surrogate");
    assert.match(clipped, /^(🚀)+ … \(\d+ more characters\)$/u);
  });
});

describe("withinStatusLimits", () => {
  const huge = "y".repeat(50_000);
  const status: MyAppInstanceStatus = {
    phase: "Degraded",
    message: huge,
    image: `registry.example.com/${"a".repeat(2000)}:1`,
    selector: Array.from({ length: 70 }, (_, i) => `k${i}${"x".repeat(60)}=v`).join(","),
    conditions: [
      {
        type: "Ready",
        status: "False",
        reason: "ChartRenderFailed",
        message: huge,
        lastTransitionTime: "2030-01-01T00:00:00Z",
      },
      {
        type: "Progressing",
        status: "False",
        reason: "ChartRenderFailed",
        message: "short",
        lastTransitionTime: "2030-01-01T00:00:00Z",
      },
    ],
  };

  it("makes a status the schema refuses one it accepts", () => {
    assert.equal(validateStatus(status).ok, false);
    const fitted = withinStatusLimits(status);
    assert.equal(validateStatus(fitted).ok, true);
    assert.equal(characters(fitted.message), statusMessageLength);
    assert.equal(characters(fitted.conditions?.[0]?.message), statusMessageLength);
    assert.equal(fitted.conditions?.[1]?.message, "short");
    assert.equal(fitted.image, undefined);
    assert.equal(fitted.selector, undefined);
    assert.equal(fitted.phase, "Degraded");
  });

  it("leaves a status within the limits as it is, and fitting twice changes nothing (no write loop)", () => {
    const ordinary: MyAppInstanceStatus = {
      phase: "Running",
      image: "nginx:1.27",
      selector: "app=web",
      message: "3/3",
    };
    assert.deepEqual(withinStatusLimits(ordinary), ordinary);
    assert.deepEqual(withinStatusLimits(withinStatusLimits(status)), withinStatusLimits(status));
  });
});
