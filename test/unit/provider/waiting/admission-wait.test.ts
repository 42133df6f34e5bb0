import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdmissionDeniedError, ServerError } from "../../../../kube/index.ts";
import {
  applyWhenAdmitted,
  kindNotYetKnown,
  unansweredWebhook,
  webhookWaitReason,
} from "../../../../provider/waiting/admission-wait.ts";
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

  it("says whether no replica answers or the apiserver does not trust the certificate yet", () => {
    assert.equal(webhookWaitReason(unanswered()), "is an operator replica serving it?");
    const untrusted = new ServerError(
      500,
      'Internal error occurred: failed calling webhook "budget.myappinstances.example.com": failed to call webhook: ' +
        'Post "https://127.0.0.1:9443/validate?timeout=5s": tls: failed to verify certificate: x509: certificate ' +
        "signed by unknown authority",
      "InternalError",
      [],
    );
    assert.match(webhookWaitReason(untrusted), /does not trust its certificate yet/);
  });
});

/** The apiserver's MutatingAdmissionPolicy on a kind whose CRD is seconds old (a 503). */
const unknownKind = () =>
  new ServerError(
    503,
    "Resource kind example.com/v1, Kind=MyAppInstance not found. There can be a delay between when " +
      "CustomResourceDefinitions are created and when they are available.",
    "ServiceUnavailable",
    [],
  );

describe("kindNotYetKnown", () => {
  it("names the kind of the defaults policy's 'not found ... There can be a delay', and nothing else", () => {
    assert.equal(kindNotYetKnown(unknownKind()), "example.com/v1, Kind=MyAppInstance");
    assert.equal(kindNotYetKnown(unanswered()), undefined);
    assert.equal(
      kindNotYetKnown(new ServerError(503, "etcdserver: leader changed", "ServiceUnavailable", [])),
      undefined,
    );
  });
});

describe("applyWhenAdmitted", () => {
  it("ends at once when the engine cancels (Ctrl-C), with the last failure and the hint", async () => {
    const clock = new FakeClock();
    const cancel = new AbortController();
    let attempts = 0;
    const waiting = applyWhenAdmitted(
      () => {
        attempts++;
        return Promise.reject(unanswered());
      },
      { clock, deadline: clock.monotonicMs() + 600_000, report: () => cancel.abort(), signal: cancel.signal },
    );
    // The first failure is reported (and cancels here) during its wait: no clock advance is needed to end it, and no
    // apply goes out after the cancel.
    await assert.rejects(
      waiting,
      /^Error: cancelled while the apply waited: Internal error occurred: failed calling webhook[\s\S]*is the operator running/,
    );
    assert.equal(attempts, 1, "no apply after the cancel");
  });

  it("retries while the admission policies do not know the kind yet, saying so", async () => {
    const clock = new FakeClock();
    const phases: string[] = [];
    let attempts = 0;
    const applied = applyWhenAdmitted(
      async () => {
        attempts += 1;
        if (attempts < 2) throw unknownKind();
        return "applied";
      },
      { clock, deadline: clock.monotonicMs() + 60_000, report: (phase) => phases.push(phase) },
    );
    await clock.advance(1_000);
    assert.equal(await applied, "applied");
    assert.deepEqual(phases, [
      "waiting for the apiserver's admission policies to know example.com/v1, Kind=MyAppInstance (its CRD is new)",
    ]);
    const never = applyWhenAdmitted(() => Promise.reject(unknownKind()), {
      clock,
      deadline: clock.monotonicMs() + 10_000,
      report: () => {},
    });
    const failed = assert.rejects(
      never,
      /are available\.\nthe apiserver's MutatingAdmissionPolicy still does not know/,
    );
    await clock.advance(20_000);
    await failed;
  });

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
