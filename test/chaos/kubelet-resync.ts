/**
 * What a kubelet does and kwok, the local cluster's stand-in for kubelets, does not: act again on a pod it failed to
 * act on. kwok v0.8.0 drops a pod write that failed with anything but a refused connection, a timeout, a 503 or a 429
 * (`shouldRetry` in its pkg/kwok/controllers/utils.go), such as one in flight while etcd restarts, and sees that pod
 * again only when something changes it: a pod bound to a node stays Pending, or one being deleted stays, for minutes
 * (test/chaos/RESULTS.md). A kubelet retries its status writes every 10 s and syncs every pod each minute. So while
 * an outage scenario runs, a pod that has waited on its node longer than that sync gets a change kwok sees (an
 * annotation), once a sync period, and the scenario reports how many it touched. Restarting kwok instead was tried:
 * the new process does not take over the node leases, and every node goes NotReady.
 */
import type { KubeClient, KubeObject } from "../../kube/index.ts";

/** How long a pod may wait on its node before it gets a second look: a kubelet's sync period. */
export const kubeletSyncMs = 60_000;

/** The annotation the second look sets (its value: when). */
export const resyncAnnotation = "chaos.example.com/kubelet-resync";

export type NodePod = KubeObject & {
  spec?: { nodeName?: string };
  status?: { phase?: string; conditions?: readonly { type: string; status: string; lastTransitionTime?: string }[] };
};

/**
 * The pods kwok has left waiting at `atMs` (ms since the epoch): bound to a node but still Pending, or still there
 * past their deletion deadline, for longer than a kubelet's sync.
 */
export function waitingOnKubelet(pods: readonly NodePod[], atMs: number, syncMs = kubeletSyncMs): NodePod[] {
  return pods.filter((pod) => {
    const deadline = pod.metadata.deletionTimestamp;
    if (deadline !== undefined) return atMs - Date.parse(deadline) > syncMs;
    if (!pod.spec?.nodeName || pod.status?.phase !== "Pending") return false;
    const scheduled = pod.status.conditions?.find((c) => c.type === "PodScheduled" && c.status === "True");
    return scheduled?.lastTransitionTime !== undefined && atMs - Date.parse(scheduled.lastTransitionTime) > syncMs;
  });
}

/** Second looks at a cluster's waiting pods, at most one per pod and sync period. */
export class KubeletResync {
  private readonly lastTouched = new Map<string, number>();
  /** Pods touched so far (a pod touched twice counts twice). */
  touched = 0;

  private readonly client: KubeClient;
  private readonly syncMs: number;
  private readonly namespace: string | undefined;

  /** The whole cluster's pods, or one namespace's; `syncMs` is how long a pod may wait (a test's is short). */
  constructor(client: KubeClient, { syncMs = kubeletSyncMs, namespace }: { syncMs?: number; namespace?: string } = {}) {
    this.client = client;
    this.syncMs = syncMs;
    this.namespace = namespace;
  }

  /** Touches each pod waiting on kwok; a list that fails (the cluster is down) throws, for the next round. */
  async round(): Promise<void> {
    const now = Date.now();
    const pods = (await this.client.list<NodePod>("v1", "Pod", { namespace: this.namespace })).items;
    for (const pod of waitingOnKubelet(pods, now, this.syncMs)) {
      const uid = pod.metadata.uid ?? `${pod.metadata.namespace}/${pod.metadata.name}`;
      if (now - (this.lastTouched.get(uid) ?? 0) < this.syncMs) continue;
      const annotations = { [resyncAnnotation]: new Date(now).toISOString() };
      const patched = await this.client
        .mergePatch("v1", "Pod", pod.metadata.name ?? "", pod.metadata.namespace, { metadata: { annotations } })
        .then(
          () => true,
          () => false, // deleted meanwhile, or the cluster went away: the next round looks again
        );
      if (!patched) continue;
      this.lastTouched.set(uid, now);
      this.touched++;
    }
  }
}
