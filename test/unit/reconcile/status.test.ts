import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCondition, type MyAppInstanceStatus } from "../../../api/index.ts";
import {
  answeringRequest,
  computeStatus,
  creationFailure,
  problemStatus,
  statusChanged,
  type ObservedWorkload,
  type StatusInput,
} from "../../../operator/reconcile/index.ts";

const t0 = new Date("2030-01-01T00:00:00Z");
const t1 = new Date("2030-01-01T00:05:00Z");
const t2 = new Date("2030-01-01T00:09:00Z");
const spec = { replicas: 3, image: "nginx:1.28", port: 8080, storageReclaimPolicy: "Retain" as const };
const selector = "app.kubernetes.io/instance=web,app.kubernetes.io/name=myapp";

/** A Deployment at `generation` running `image`, with status counts. */
function deployment(
  image: string,
  counts: { updated: number; ready: number; replicas?: number; observedGeneration?: number },
  generation = 2,
): ObservedWorkload {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop", generation },
    spec: { replicas: 3, template: { spec: { containers: [{ name: "app", image }] } } },
    status: {
      observedGeneration: counts.observedGeneration ?? generation,
      replicas: counts.replicas ?? 3,
      updatedReplicas: counts.updated,
      readyReplicas: counts.ready,
      availableReplicas: counts.ready,
    },
  };
}

function input(overrides: Partial<StatusInput>): StatusInput {
  return {
    generation: 2,
    spec,
    previous: undefined,
    selector,
    endpoint: "web.default.svc:8080",
    workload: undefined,
    ...overrides,
  };
}

const cond = (status: MyAppInstanceStatus, type: string) => findCondition(status.conditions, type);

describe("computeStatus: a rollout from nginx:1.27 to nginx:1.28", () => {
  // GIVEN an instance that ran nginx:1.27, Ready since t0
  const running = computeStatus(
    input({
      generation: 1,
      spec: { ...spec, image: "nginx:1.27" },
      workload: deployment("nginx:1.27", { updated: 3, ready: 3 }, 1),
    }),
    t0,
  );

  it("starts Running on the old image", () => {
    assert.equal(running.phase, "Running");
    assert.equal(running.image, "nginx:1.27");
    assert.equal(cond(running, "Ready")?.status, "True");
    assert.equal(cond(running, "Ready")?.lastTransitionTime, "2030-01-01T00:00:00Z");
  });

  // WHEN the new generation is applied but the controller has not seen it yet
  const applied = computeStatus(
    input({ previous: running, workload: deployment("nginx:1.28", { updated: 3, ready: 3, observedGeneration: 1 }) }),
    t1,
  );

  it("is Progressing (RollingOut) as soon as the Deployment's generation is ahead of what its controller saw", () => {
    assert.equal(applied.phase, "Progressing");
    assert.equal(applied.image, "nginx:1.27", "status.image stays until the rollout is complete");
    assert.equal(applied.observedGeneration, 2);
    assert.deepEqual(
      applied.conditions?.map((c) => [c.type, c.status, c.reason, c.observedGeneration, c.lastTransitionTime]),
      [
        ["Ready", "False", "RollingOut", 2, "2030-01-01T00:05:00Z"],
        ["Progressing", "True", "RollingOut", 2, "2030-01-01T00:05:00Z"],
        ["Degraded", "False", "AsExpected", 2, "2030-01-01T00:00:00Z"],
        ["Reconciling", "True", "RollingOut", 2, "2030-01-01T00:05:00Z"],
      ],
    );
  });

  // WHEN one replica runs the new template
  const midway = computeStatus(
    input({ previous: applied, workload: deployment("nginx:1.28", { updated: 1, ready: 3, replicas: 4 }) }),
    t2,
  );

  it("keeps each lastTransitionTime while only the message moves", () => {
    assert.equal(cond(midway, "Progressing")?.lastTransitionTime, "2030-01-01T00:05:00Z");
    assert.equal(cond(midway, "Ready")?.lastTransitionTime, "2030-01-01T00:05:00Z");
    assert.equal(cond(midway, "Progressing")?.message, "rolling out nginx:1.28: 1/3 replicas updated, 3/3 ready");
    assert.equal(midway.replicas, 4, "old and new pods exist");
    assert.equal(midway.image, "nginx:1.27");
  });

  // WHEN every replica runs it and is available
  const done = computeStatus(
    input({ previous: midway, workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }),
    t2,
  );

  it("moves status.image and reports Running when the rollout is complete", () => {
    assert.equal(done.phase, "Running");
    assert.equal(done.image, "nginx:1.28");
    assert.equal(done.message, "3/3 replicas ready, running nginx:1.28");
    assert.equal(cond(done, "Ready")?.status, "True");
    assert.equal(cond(done, "Ready")?.lastTransitionTime, "2030-01-01T00:09:00Z");
    assert.equal(cond(done, "Progressing")?.status, "False");
    assert.equal(cond(done, "Reconciling"), undefined, "removed when no longer true");
    assert.equal(done.selector, selector);
    assert.equal(done.endpoint, "web.default.svc:8080", "where the app answers, for -o wide and the provider");
  });

  it("computes the same status again, so a resync writes nothing", () => {
    const again = computeStatus(
      input({ previous: done, workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }),
      new Date("2031-01-01T00:00:00Z"),
    );
    assert.ok(!statusChanged(done, again));
  });
});

/** A StatefulSet at generation 1 running nginx:1.28 with these counts. */
function statefulSet(counts: { ready: number; replicas: number }): ObservedWorkload {
  return { ...deployment("nginx:1.28", { updated: counts.replicas, ...counts }, 1), kind: "StatefulSet" };
}

/** The operator's step while it deletes a StatefulSet (orphaning its pods) to re-create it. */
const recreateStep = { reason: "RecreatingWorkload", message: "re-creating" };

/** An instance running 3 of 3 ready pods in a StatefulSet. */
function runningStatus(): MyAppInstanceStatus {
  return computeStatus(input({ workload: statefulSet({ ready: 3, replicas: 3 }) }), t0);
}

/** That instance once the operator began re-creating its StatefulSet, the pods still counted 3 of 3. */
function recreatingStatus(): MyAppInstanceStatus {
  return computeStatus(
    input({ previous: runningStatus(), step: recreateStep, workload: statefulSet({ ready: 3, replicas: 3 }) }),
    t1,
  );
}

describe("computeStatus: not complete yet", () => {
  it("is Pending before any replica is ready on a new instance", () => {
    const status = computeStatus(
      input({ generation: 1, workload: deployment("nginx:1.28", { updated: 3, ready: 0 }, 1) }),
      t0,
    );
    assert.equal(status.phase, "Pending");
    assert.equal(cond(status, "Progressing")?.reason, "Creating");
    assert.equal(status.image, undefined);
  });

  it("is Creating when the workload is not there yet", () => {
    const status = computeStatus(input({}), t0);
    assert.equal(cond(status, "Progressing")?.reason, "Creating");
    assert.equal(status.replicas, 0);
  });

  it("waits for every available replica, even when all are updated", () => {
    const previous = computeStatus(input({ workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }), t0);
    const status = computeStatus(input({ previous, workload: deployment("nginx:1.28", { updated: 3, ready: 2 }) }), t1);
    assert.equal(status.phase, "Progressing");
    assert.equal(cond(status, "Progressing")?.reason, "WaitingForReplicas");
    assert.equal(status.readyReplicas, 2);
  });

  it("calls a change of replica count Scaling", () => {
    const previous = computeStatus(input({ workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }), t0);
    const status = computeStatus(
      input({
        previous,
        spec: { ...spec, replicas: 5 },
        workload: deployment("nginx:1.28", { updated: 5, ready: 3, replicas: 3 }),
      }),
      t1,
    );
    assert.equal(cond(status, "Progressing")?.reason, "Scaling");
  });

  it("counts the pods of both workloads while moving from one kind to the other", () => {
    const sts: ObservedWorkload = {
      ...deployment("nginx:1.28", { updated: 3, ready: 1 }),
      kind: "StatefulSet",
    };
    const status = computeStatus(
      input({ workload: sts, retiring: deployment("nginx:1.28", { updated: 3, ready: 3 }) }),
      t0,
    );
    assert.equal(cond(status, "Progressing")?.reason, "Migrating");
    assert.equal(status.readyReplicas, 4);
    assert.equal(status.replicas, 6);
    assert.match(status.message ?? "", /the Deployment keeps serving/);
  });

  it("keeps the last known counts while a new workload has not been reported on (no readyReplicas dip)", () => {
    // GIVEN a running instance whose StatefulSet was just re-created over its running pods
    const previous = computeStatus(input({ workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }), t0);
    const fresh: ObservedWorkload = { ...deployment("nginx:1.28", { updated: 0, ready: 0 }), kind: "StatefulSet" };
    delete (fresh as { status?: unknown }).status;

    // WHEN the status is computed before its controller reports
    const status = computeStatus(input({ previous, workload: fresh }), t1);

    // THEN the counts stay, while the conditions say it is not settled
    assert.equal(status.readyReplicas, 3);
    assert.equal(status.replicas, 3);
    assert.equal(cond(status, "Progressing")?.status, "True");
  });

  it("keeps the counts while a re-created StatefulSet adopts its running pods, then reports it as it is", () => {
    // GIVEN a running instance (3 of 3 ready) whose StatefulSet the operator deleted, orphaning its pods
    const recreating = recreatingStatus();

    // WHEN the new StatefulSet has adopted one pod so far (its controller saw the others' old owner late)
    const adopting = computeStatus(
      input({ previous: recreating, workload: statefulSet({ ready: 1, replicas: 1 }) }),
      t1,
    );
    // and then two
    const still = computeStatus(input({ previous: adopting, workload: statefulSet({ ready: 2, replicas: 2 }) }), t1);
    // and then all three
    const adopted = computeStatus(input({ previous: still, workload: statefulSet({ ready: 3, replicas: 3 }) }), t1);

    // THEN no pod that kept serving is reported lost, the step says what it waits for, and it ends with adoption
    assert.deepEqual(
      [adopting, still].map((s) => [s.readyReplicas, s.replicas, cond(s, "Progressing")?.reason]),
      [
        [3, 3, "AdoptingPods"],
        [3, 3, "AdoptingPods"],
      ],
    );
    assert.match(still.message ?? "", /adopted 2 of the 3 pods that kept running/);
    assert.equal(adopted.phase, "Running");
    assert.equal(adopted.readyReplicas, 3);
    // and a pod that is really missing afterwards is reported as such
    const lost = computeStatus(input({ previous: adopted, workload: statefulSet({ ready: 2, replicas: 3 }) }), t1);
    assert.equal(lost.readyReplicas, 2);
  });

  it("keeps the counts while the old StatefulSet, deleted with its pods orphaned, counts fewer of them", () => {
    // GIVEN a running instance (3 of 3 ready) whose StatefulSet is being deleted to be re-created
    // WHEN the old one, releasing its pods, reports fewer of them (as a busy CI run saw: 2, 1, 1, 2)
    const releasing = computeStatus(
      input({ previous: runningStatus(), step: recreateStep, workload: statefulSet({ ready: 1, replicas: 1 }) }),
      t1,
    );
    // THEN the pods, which keep serving, are not reported lost
    assert.deepEqual([releasing.readyReplicas, releasing.replicas], [3, 3]);
    assert.equal(cond(releasing, "Progressing")?.reason, "RecreatingWorkload");
  });

  it("keeps the counts while the re-created StatefulSet holds the pods but does not count them ready yet", () => {
    // GIVEN a running instance (3 of 3 ready) whose StatefulSet is being re-created
    const recreating = recreatingStatus();

    // WHEN the new StatefulSet's first counts hold all three pods but none ready (as a busy CI run saw)
    const lagging = computeStatus(
      input({ previous: recreating, workload: statefulSet({ ready: 0, replicas: 3 }) }),
      t1,
    );

    // THEN the serving pods are not reported lost, and the step says what it waits for
    assert.deepEqual([lagging.readyReplicas, cond(lagging, "Progressing")?.reason], [3, "AdoptingPods"]);
    assert.match(lagging.message ?? "", /holds the 3 pods that kept running; 0 of the 3 that were ready/);
    // and once they count as ready, it is done
    const settled = computeStatus(input({ previous: lagging, workload: statefulSet({ ready: 3, replicas: 3 }) }), t1);
    assert.equal(settled.phase, "Running");
    // but not forever: two minutes after the move began, pods still not ready are reported as they are
    const later = new Date(t1.getTime() + 121_000);
    const given = computeStatus(input({ previous: lagging, workload: statefulSet({ ready: 1, replicas: 3 }) }), later);
    assert.equal(given.readyReplicas, 1);
    assert.notEqual(cond(given, "Progressing")?.reason, "AdoptingPods");
  });

  it("does not wait for pods a scale-down removes while the StatefulSet is re-created", () => {
    const statefulSet: ObservedWorkload = {
      ...deployment("nginx:1.28", { updated: 1, ready: 1, replicas: 1 }, 1),
      kind: "StatefulSet",
    };
    const old = { ...statefulSet, status: { ...statefulSet.status, replicas: 3, readyReplicas: 3 } };
    const running = computeStatus(input({ workload: old }), t0);
    const recreating = computeStatus(
      input({ previous: running, step: { reason: "RecreatingWorkload", message: "re-creating" }, workload: old }),
      t1,
    );
    const status = computeStatus(
      input({ previous: recreating, spec: { ...spec, replicas: 1 }, workload: statefulSet }),
      t1,
    );
    assert.equal(status.readyReplicas, 1);
    assert.notEqual(cond(status, "Progressing")?.reason, "AdoptingPods");
  });

  it("is Progressing during a step even when the workload looks complete", () => {
    const step = { reason: "RecreatingWorkload", message: "re-creating" };
    const status = computeStatus(input({ step, workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }), t0);
    assert.equal(cond(status, "Progressing")?.reason, "RecreatingWorkload");
    assert.equal(cond(status, "Ready")?.status, "False");
  });

  it("requires a StatefulSet's current revision to catch up", () => {
    const sts: ObservedWorkload = {
      ...deployment("nginx:1.28", { updated: 3, ready: 3 }),
      kind: "StatefulSet",
    };
    const settling = { ...sts, status: { ...sts.status, currentRevision: "web-1", updateRevision: "web-2" } };
    const settled = { ...sts, status: { ...sts.status, currentRevision: "web-2", updateRevision: "web-2" } };
    assert.equal(computeStatus(input({ workload: settling }), t0).phase, "Progressing");
    assert.equal(computeStatus(input({ workload: settled }), t0).phase, "Running");
  });
});

describe("computeStatus: problems", () => {
  it("reports a permanent problem as Degraded and kstatus Stalled, without Reconciling", () => {
    const previous = computeStatus(input({ workload: deployment("nginx:1.28", { updated: 3, ready: 1 }) }), t0);
    const problem = { reason: "StorageExpansionUnsupported", message: "cannot grow" };
    const status = computeStatus(
      input({ previous, problem, workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }),
      t1,
    );
    assert.equal(status.phase, "Degraded");
    assert.equal(status.message, "cannot grow");
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ["Ready", "False", "StorageExpansionUnsupported"],
        ["Progressing", "False", "StorageExpansionUnsupported"],
        ["Degraded", "True", "StorageExpansionUnsupported"],
        ["Stalled", "True", "StorageExpansionUnsupported"],
      ],
    );
    assert.equal(status.image, "nginx:1.28", "the rolled-out image is still reported");
  });

  it("turns an exceeded progress deadline into Degraded", () => {
    const stuck = deployment("nginx:1.28", { updated: 1, ready: 2 });
    const withCondition: ObservedWorkload = {
      ...stuck,
      status: {
        ...stuck.status,
        conditions: [
          {
            type: "Progressing",
            status: "False",
            reason: "ProgressDeadlineExceeded",
            message: 'ReplicaSet "web-1" has timed out progressing.',
          },
        ],
      },
    };
    const status = computeStatus(input({ workload: withCondition }), t0);
    assert.equal(cond(status, "Degraded")?.reason, "ProgressDeadlineExceeded");
    assert.equal(cond(status, "Stalled")?.message, 'ReplicaSet "web-1" has timed out progressing.');
  });

  it("problemStatus keeps counts, image and selector and sets the problem conditions", () => {
    const previous = computeStatus(input({ workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }), t0);
    const status = problemStatus(previous, 3, { reason: "InvalidSpec", message: "spec.port: must be ..." }, t1);
    assert.equal(status.readyReplicas, 3);
    assert.equal(status.image, "nginx:1.28");
    assert.equal(status.selector, selector);
    assert.equal(status.observedGeneration, 3);
    assert.equal(status.phase, "Degraded");
    assert.equal(cond(status, "Degraded")?.lastTransitionTime, "2030-01-01T00:05:00Z");
    assert.equal(cond(status, "Degraded")?.observedGeneration, 3);
  });
});

describe("statusChanged", () => {
  it("is true for a first status and for any changed field, false for the same content", () => {
    const status = computeStatus(input({ workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }), t0);
    assert.ok(statusChanged(undefined, status));
    assert.ok(!statusChanged(structuredClone(status), status));
    assert.ok(statusChanged({ ...status, readyReplicas: 2 }, status));
    const reordered = Object.fromEntries(Object.entries(status).reverse()) as MyAppInstanceStatus;
    assert.ok(!statusChanged(reordered, status), "the apiserver may return keys in another order");
  });
});

describe("answeringRequest: the reconcile request a status answers", () => {
  const computed = computeStatus(input({ workload: deployment("nginx:1.28", { updated: 3, ready: 3 }) }), t0);

  it("names the request the instance carried, so a new request is a status change", () => {
    const previous = { ...computed, lastHandledReconcileAt: "2030-01-01T00:00:00Z" };
    const next = answeringRequest(computed, "2030-01-01T00:05:00Z", previous);
    assert.equal(next.lastHandledReconcileAt, "2030-01-01T00:05:00Z");
    assert.ok(statusChanged(previous, next), "the same observation with a new request is written");
    assert.ok(!statusChanged(next, answeringRequest(computed, "2030-01-01T00:05:00Z", next)));
  });

  it("keeps naming the last request answered when the instance carries none now, and adds nothing before one", () => {
    const previous = { ...computed, lastHandledReconcileAt: "earlier" };
    assert.equal(answeringRequest(computed, undefined, previous).lastHandledReconcileAt, "earlier");
    assert.deepEqual(answeringRequest(computed, undefined, computed), computed);
  });

  it("does not echo a value longer than the status may hold (256 characters)", () => {
    const previous = { ...computed, lastHandledReconcileAt: "earlier" };
    assert.equal(answeringRequest(computed, "x".repeat(257), previous).lastHandledReconcileAt, "earlier");
    assert.equal(answeringRequest(computed, "x".repeat(256), previous).lastHandledReconcileAt, "x".repeat(256));
  });
});

describe("creationFailure: what a StatefulSet's create events say", () => {
  const event = (reason: string, at: string, message = reason) => ({
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `web.${at}` },
    reason,
    message,
    lastTimestamp: at,
  });

  it("the newest create event decides", () => {
    const failed = event("FailedCreate", "2030-01-01T00:00:02Z", "forbidden");
    const succeeded = event("SuccessfulCreate", "2030-01-01T00:00:03Z");
    assert.deepEqual(creationFailure([failed]), { reason: "FailedCreate", message: "forbidden" });
    assert.equal(creationFailure([succeeded, failed]), undefined);
    assert.equal(creationFailure([event("Scheduled", "2030-01-01T00:00:09Z")]), undefined);
  });

  it("a create that failed only because the control plane was away is no failure (the controller retries it)", () => {
    for (const message of [
      "create Pod web-1 in StatefulSet web failed error: etcdserver: request timed out",
      "create Pod web-1 in StatefulSet web failed error: Timeout: request did not complete within requested timeout - context deadline exceeded",
      'create Pod web-1 in StatefulSet web failed error: Internal error occurred: failed calling webhook "x": connection refused',
    ]) {
      assert.equal(creationFailure([event("FailedCreate", "2030-01-01T00:00:02Z", message)]), undefined, message);
    }
    const refused = 'create Pod web-1 in StatefulSet web failed error: pods "web-1" is forbidden: violates PodSecurity';
    assert.equal(creationFailure([event("FailedCreate", "2030-01-01T00:00:02Z", refused)])?.message, refused);
  });

  it("reads the time of a repeated event from its series", () => {
    const repeated = {
      ...event("FailedCreate", "2030-01-01T00:00:01Z"),
      series: { lastObservedTime: "2030-01-01T00:01:00Z" },
    };
    assert.equal(
      creationFailure([repeated, event("SuccessfulCreate", "2030-01-01T00:00:30Z")])?.reason,
      "FailedCreate",
    );
  });
});

describe("computeStatus: a Deployment that cannot create pods", () => {
  it("is Degraded with the ReplicaFailure reason and message", () => {
    const stuck = deployment("nginx:1.28", { updated: 0, ready: 0, replicas: 0 });
    const conditions = [
      { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: "pods are forbidden: quota" },
    ];
    const status = computeStatus(input({ workload: { ...stuck, status: { ...stuck.status, conditions } } }), t0);
    assert.equal(status.phase, "Degraded");
    assert.equal(cond(status, "Degraded")?.reason, "FailedCreate");
    assert.equal(cond(status, "Degraded")?.message, "pods cannot be created: pods are forbidden: quota");
  });

  it("is only Progressing when the failure was the control plane's (etcd timed out): the ReplicaSet retries", () => {
    const stuck = deployment("nginx:1.28", { updated: 0, ready: 0, replicas: 0 });
    const conditions = [
      { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: "etcdserver: request timed out" },
    ];
    const status = computeStatus(input({ workload: { ...stuck, status: { ...stuck.status, conditions } } }), t0);
    assert.notEqual(status.phase, "Degraded");
    assert.notEqual(cond(status, "Degraded")?.status, "True");
  });
});
