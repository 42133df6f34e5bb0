/** The one place where the steps' outcomes are combined. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mergeOutcomes } from "../../../operator/reconcile/step.ts";

const quota = { reason: "FailedCreate", message: "exceeded quota" };
const noClass = { reason: "StorageClassNotFound", message: "StorageClass fast does not exist" };
const recreating = { reason: "RecreatingWorkload", message: "re-creating the StatefulSet" };
const growing = { reason: "ExpandingVolumes", message: "growing volume claims to 2Gi" };

describe("mergeOutcomes", () => {
  it("is converged ({}, no undefined fields) when no step has anything to say", () => {
    // GIVEN steps that all converged WHEN merged THEN nothing: no requeue, no problem, no step
    assert.deepEqual(mergeOutcomes(), {});
    assert.deepEqual(mergeOutcomes({}, {}), {});
  });

  it("keeps the first problem: the earliest cause is the one to fix", () => {
    assert.deepEqual(mergeOutcomes({}, { problem: noClass }, { problem: quota }), { problem: noClass });
  });

  it("keeps the furthest step under way", () => {
    assert.deepEqual(mergeOutcomes({ step: recreating }, {}, { step: growing }), { step: growing });
  });

  it("looks again as soon as the soonest waiting step asks, whatever the order", () => {
    // GIVEN a StorageClass poll (30 s) and a wait for the operator's own next action (5 s)
    assert.deepEqual(mergeOutcomes({ requeueAfterMs: 30_000 }, { requeueAfterMs: 5000 }), { requeueAfterMs: 5000 });
    assert.deepEqual(mergeOutcomes({ requeueAfterMs: 5000 }, { requeueAfterMs: 30_000 }), { requeueAfterMs: 5000 });
    // A zero requeue is a requeue (the runtime decides what 0 means), not "none".
    assert.deepEqual(mergeOutcomes({ requeueAfterMs: 0 }, { requeueAfterMs: 5000 }), { requeueAfterMs: 0 });
  });

  it("combines the three fields independently and reads nothing else of a step's answer", () => {
    const storage = { problem: noClass, requeueAfterMs: 30_000, apply: "a StatefulSet" };
    const retire = { requeueAfterMs: 5000, retiring: "the Deployment" };
    assert.deepEqual(mergeOutcomes(storage, { step: growing }, retire), {
      problem: noClass,
      step: growing,
      requeueAfterMs: 5000,
    });
  });
});
