import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { kubeletSyncMs, waitingOnKubelet, type NodePod } from "../../chaos/kubelet-resync.ts";

const at = Date.parse("2026-12-05T12:00:00Z");
const ago = (ms: number) => new Date(at - ms).toISOString();

function pod(
  name: string,
  fields: { node?: string; phase?: string; scheduledAt?: string; deletion?: string },
): NodePod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "ns", ...(fields.deletion ? { deletionTimestamp: fields.deletion } : {}) },
    spec: fields.node ? { nodeName: fields.node } : {},
    status: {
      phase: fields.phase ?? "Pending",
      conditions: fields.scheduledAt
        ? [{ type: "PodScheduled", status: "True", lastTransitionTime: fields.scheduledAt }]
        : [],
    },
  };
}

describe("waitingOnKubelet", () => {
  it("picks a pod bound to a node and Pending for longer than a kubelet's sync", () => {
    const pods = [
      pod("stuck", { node: "n1", scheduledAt: ago(kubeletSyncMs + 1_000) }),
      pod("just-bound", { node: "n1", scheduledAt: ago(5_000) }),
    ];
    assert.deepEqual(
      waitingOnKubelet(pods, at).map((p) => p.metadata.name),
      ["stuck"],
    );
  });

  it("leaves alone what is the scheduler's or already running", () => {
    const pods = [
      pod("unscheduled", { scheduledAt: undefined }),
      pod("running", { node: "n1", phase: "Running", scheduledAt: ago(10 * kubeletSyncMs) }),
    ];
    assert.deepEqual(waitingOnKubelet(pods, at), []);
  });

  it("picks a pod still there a sync period past its deletion deadline, not one within it", () => {
    const pods = [
      pod("never-deleted", { node: "n1", phase: "Running", deletion: ago(kubeletSyncMs + 1_000) }),
      pod("terminating", { node: "n1", phase: "Running", deletion: ago(10_000) }),
      pod("grace-period-ahead", { node: "n1", phase: "Running", deletion: new Date(at + 30_000).toISOString() }),
    ];
    assert.deepEqual(
      waitingOnKubelet(pods, at).map((p) => p.metadata.name),
      ["never-deleted"],
    );
  });
});
