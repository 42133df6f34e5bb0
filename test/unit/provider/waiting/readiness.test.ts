import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Condition } from "../../../../api/index.ts";
import type { LiveInstance } from "../../../../provider/manifest.ts";
import {
  assessReadiness,
  describeConditions,
  operatorSilenceMs,
  waitingPhase,
} from "../../../../provider/waiting/readiness.ts";

const at = "2030-01-01T00:00:00Z";
const condition = (
  type: string,
  status: Condition["status"],
  reason: string,
  observedGeneration?: number,
): Condition => ({
  type,
  status,
  reason,
  message: `${type} is ${status} because ${reason}`,
  lastTransitionTime: at,
  ...(observedGeneration === undefined ? {} : { observedGeneration }),
});

function instance(status: LiveInstance["status"], extra: Partial<LiveInstance["metadata"]> = {}): LiveInstance {
  return {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: { name: "web", namespace: "default", generation: 4, ...extra },
    spec: { replicas: 3, image: "nginx:1.28" },
    status,
  };
}

describe("assessReadiness", () => {
  const cases: {
    name: string;
    live: LiveInstance;
    generation: number;
    expected: ReturnType<typeof assessReadiness>;
  }[] = [
    {
      name: "no status yet: waiting for the operator",
      live: instance(undefined),
      generation: 4,
      expected: {
        state: "waiting",
        progress: "waiting for the operator to act on generation 4",
        awaitingOperator: true,
      },
    },
    {
      name: "Ready=True for the applied generation: ready",
      live: instance({ observedGeneration: 4, conditions: [condition("Ready", "True", "Available", 4)] }),
      generation: 4,
      expected: { state: "ready" },
    },
    {
      name: "Ready=True left over from the previous spec: still waiting",
      live: instance({
        observedGeneration: 3,
        readyReplicas: 3,
        conditions: [condition("Ready", "True", "Available", 3)],
      }),
      generation: 4,
      expected: {
        state: "waiting",
        progress: "waiting for the operator to act on generation 4",
        awaitingOperator: true,
      },
    },
    {
      name: "Ready=True without its own observedGeneration: status.observedGeneration decides",
      live: instance({ observedGeneration: 5, conditions: [condition("Ready", "True", "Available")] }),
      generation: 4,
      expected: { state: "ready" },
    },
    {
      name: "Stalled for a transient cause (the operator keeps retrying): still waiting, quoting the operator",
      live: instance({
        observedGeneration: 3,
        conditions: [
          condition("Ready", "True", "Available", 3),
          condition("Degraded", "False", "AsExpected", 3),
          condition("Stalled", "True", "TransientFailure", 4),
        ],
      }),
      generation: 4,
      expected: { state: "waiting", progress: "the operator is retrying: Stalled is True because TransientFailure" },
    },
    {
      name: "Stalled for a transient cause but Degraded for this generation: failed with Degraded's reason",
      live: instance({
        observedGeneration: 4,
        conditions: [
          condition("Degraded", "True", "ProgressDeadlineExceeded", 4),
          condition("Stalled", "True", "TransientFailure", 4),
        ],
      }),
      generation: 4,
      expected: {
        state: "failed",
        reason: "ProgressDeadlineExceeded",
        message: "Degraded is True because ProgressDeadlineExceeded",
      },
    },
    {
      name: "Stalled for a permanent reason: failed",
      live: instance({
        observedGeneration: 4,
        conditions: [condition("Stalled", "True", "ReconcileFailing", 4)],
      }),
      generation: 4,
      expected: { state: "failed", reason: "ReconcileFailing", message: "Stalled is True because ReconcileFailing" },
    },
    {
      name: "rolling out: the operator's own words are the progress line",
      live: instance({
        observedGeneration: 4,
        readyReplicas: 2,
        conditions: [condition("Ready", "False", "RollingOut", 4), condition("Progressing", "True", "RollingOut", 4)],
      }),
      generation: 4,
      expected: { state: "waiting", progress: "Ready is False because RollingOut" },
    },
    {
      name: "no message: the counts, capped at the desired replicas (old and new pods during a surge)",
      live: instance({
        observedGeneration: 4,
        readyReplicas: 4,
        conditions: [{ ...condition("Ready", "False", "RollingOut", 4), message: "" }],
      }),
      generation: 4,
      expected: { state: "waiting", progress: "3/3 replicas ready" },
    },
    {
      name: "no conditions yet for this generation: the counts",
      live: instance({ observedGeneration: 4, readyReplicas: 2 }),
      generation: 4,
      expected: { state: "waiting", progress: "2/3 replicas ready" },
    },
    {
      name: "Stalled for this generation: failed, with the operator's reason",
      live: instance({
        observedGeneration: 4,
        conditions: [
          condition("Ready", "False", "StorageExpansionUnsupported", 4),
          condition("Stalled", "True", "StorageExpansionUnsupported", 4),
        ],
      }),
      generation: 4,
      expected: {
        state: "failed",
        reason: "StorageExpansionUnsupported",
        message: "Stalled is True because StorageExpansionUnsupported",
      },
    },
    {
      name: "Degraded alone also fails",
      live: instance({
        observedGeneration: 4,
        conditions: [condition("Degraded", "True", "ProgressDeadlineExceeded", 4)],
      }),
      generation: 4,
      expected: {
        state: "failed",
        reason: "ProgressDeadlineExceeded",
        message: "Degraded is True because ProgressDeadlineExceeded",
      },
    },
    {
      name: "Stalled from the previous generation does not fail the new one",
      live: instance({ observedGeneration: 3, conditions: [condition("Stalled", "True", "InvalidSpec", 3)] }),
      generation: 4,
      expected: {
        state: "waiting",
        progress: "waiting for the operator to act on generation 4",
        awaitingOperator: true,
      },
    },
    {
      name: "being deleted: failed",
      live: instance({ observedGeneration: 4 }, { deletionTimestamp: at }),
      generation: 4,
      expected: { state: "failed", reason: "Deleting", message: "the instance is being deleted" },
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(assessReadiness(c.live, c.generation), c.expected));
  }

  // An update asks the operator to reconcile now (the reconcile-request annotation): a status that answers an
  // earlier request says nothing about this one, even for the same generation.
  const degraded = { observedGeneration: 4, conditions: [condition("Degraded", "True", "ChildOwnedElsewhere", 4)] };
  const ready = { observedGeneration: 4, conditions: [condition("Ready", "True", "Available", 4)] };
  const waitingForRequest = {
    state: "waiting",
    progress: "waiting for the operator to act on this update's reconcile request",
    awaitingOperator: true,
  } as const;
  const requestCases: { name: string; live: LiveInstance; expected: ReturnType<typeof assessReadiness> }[] = [
    {
      name: "a verdict answering an earlier request: waiting, not failed",
      live: instance({ ...degraded, lastHandledReconcileAt: "earlier" }),
      expected: waitingForRequest,
    },
    {
      name: "Ready answering an earlier request: waiting, not ready",
      live: instance({ ...ready, lastHandledReconcileAt: "earlier" }),
      expected: waitingForRequest,
    },
    {
      name: "a verdict answering this request counts",
      live: instance({ ...degraded, lastHandledReconcileAt: "now" }),
      expected: {
        state: "failed",
        reason: "ChildOwnedElsewhere",
        message: "Degraded is True because ChildOwnedElsewhere",
      },
    },
    {
      name: "an operator that never answered a request (older than the field): judged by generation",
      live: instance(ready),
      expected: { state: "ready" },
    },
  ];
  for (const c of requestCases) {
    test(c.name, () => assert.deepEqual(assessReadiness(c.live, 4, "now"), c.expected));
  }
});

describe("waitingPhase", () => {
  const awaiting = { state: "waiting", progress: "waiting for the operator to act on generation 1" } as const;
  test("the operator's words while the wait is young, or while an operator is acting", () => {
    assert.equal(waitingPhase({ ...awaiting, awaitingOperator: true }, false), awaiting.progress);
    assert.equal(waitingPhase({ state: "waiting", progress: "1/3 replicas ready" }, true), "1/3 replicas ready");
  });
  test(`after ${operatorSilenceMs / 1000} s without any operator acting, what to check`, () => {
    const phase = waitingPhase({ ...awaiting, awaitingOperator: true }, true);
    assert.match(
      phase,
      /^waiting for the operator to act on generation 1; no operator has acted on it yet: is one running/,
    );
    assert.match(phase, /npx --no-install myapp-operator/);
  });
});

describe("describeConditions", () => {
  test("a True condition that only repeats Ready's message is left out", () => {
    const same = (type: string, status: Condition["status"]) => ({
      ...condition(type, status, "Creating"),
      message: "1/2 ready",
    });
    const live = instance({
      conditions: [same("Ready", "False"), same("Progressing", "True"), same("Reconciling", "True")],
    });
    assert.deepEqual(describeConditions(live), ["Ready=False Creating: 1/2 ready"]);
  });

  test("Ready always, the others when True, as Type=Status Reason: message", () => {
    const live = instance({
      conditions: [
        condition("Ready", "False", "Scaling"),
        condition("Progressing", "False", "Idle"),
        condition("Degraded", "True", "QuotaExceeded"),
      ],
    });
    assert.deepEqual(describeConditions(live), [
      "Ready=False Scaling: Ready is False because Scaling",
      "Degraded=True QuotaExceeded: Degraded is True because QuotaExceeded",
    ]);
  });

  test("a condition from an older generation says so", () => {
    const live = instance({ observedGeneration: 3, conditions: [condition("Ready", "True", "Available", 3)] });
    assert.deepEqual(describeConditions(live, 4), [
      "Ready=True Available: Ready is True because Available (as of generation 3)",
    ]);
    assert.deepEqual(describeConditions(live, 3), ["Ready=True Available: Ready is True because Available"]);
  });

  test("nothing to say without an instance", () => assert.deepEqual(describeConditions(undefined), []));
});
