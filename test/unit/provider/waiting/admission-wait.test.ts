import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdmissionDeniedError, ServerError } from "../../../../kube/index.ts";
import { applyWhenAdmitted, unansweredWebhook } from "../../../../provider/waiting/admission-wait.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";

const unanswered = () =>
  new ServerError(
    500,
    'Internal error occurred: failed calling webhook "validate.myappinstances.example.com": failed to call webhook: ' +
      'Post "https://127.0.0.1:9443/validate?timeout=5s": dial tcp 127.0.0.1:9443: connect: connection refused',
    "InternalError",
    [],
  );

describe("unansweredWebhook", () => {
  it("names the webhook of the apiserver's 'failed calling webhook', and nothing else", () => {
    assert.equal(unansweredWebhook(unanswered()), "validate.myappinstances.example.com at https://127.0.0.1:9443");
    assert.equal(
      unansweredWebhook(new ServerError(500, "etcdserver: request timed out", "InternalError", [])),
      undefined,
    );
    const denied = new AdmissionDeniedError(
      403,
      'admission webhook "validate.myappinstances.example.com" denied the request: x',
      "Forbidden",
      [],
    );
    assert.equal(unansweredWebhook(denied), undefined);
  });
});

describe("applyWhenAdmitted", () => {
  it("retries while the webhook does not answer, saying so, and returns the apply's result", async () => {
    const clock = new FakeClock();
    const phases: string[] = [];
    let attempts = 0;
    const applied = applyWhenAdmitted(
      async () => {
        attempts += 1;
        if (attempts < 3) throw unanswered();
        return "applied";
      },
      { clock, deadline: clock.monotonicMs() + 60_000, report: (phase) => phases.push(phase) },
    );
    await clock.advance(1_000);
    await clock.advance(2_000);
    assert.equal(await applied, "applied");
    assert.equal(attempts, 3);
    assert.match(
      phases[0] ?? "",
      /waiting for the admission webhook validate\.myappinstances\.example\.com at https:\/\/127\.0\.0\.1:9443 to answer/,
    );
  });

  it("fails at once on a denial, and at the deadline with what to check", async () => {
    const clock = new FakeClock();
    const denied = new AdmissionDeniedError(403, "denied", "Forbidden", []);
    await assert.rejects(
      applyWhenAdmitted(() => Promise.reject(denied), {
        clock,
        deadline: clock.monotonicMs() + 60_000,
        report: () => {},
      }),
      (error) => error === denied,
    );
    const waiting = applyWhenAdmitted(() => Promise.reject(unanswered()), {
      clock,
      deadline: clock.monotonicMs() + 10_000,
      report: () => {},
    });
    const failed = assert.rejects(
      waiting,
      /connection refused\nno operator replica answers the platform's admission webhook/,
    );
    await clock.advance(20_000);
    await failed;
  });
});
