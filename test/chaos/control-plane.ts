/**
 * Control-plane outages on a local cluster of the scenario's own: one of its processes (kube-apiserver or etcd)
 * SIGKILLed by pid, kept down for a while, then started again the way `npm run cluster -- up` starts a stopped
 * cluster (`kwokctl start cluster`, which starts only what is not running), until /readyz answers ok.
 *
 * A real control plane runs under a supervisor (the kubelet of its static pods, systemd) that restarts whatever
 * exits; the local one has none, and kube-scheduler and kube-controller-manager exit when an outage outlasts
 * their leader-election renew deadline. So while a scenario runs, a supervisor here restarts every component
 * that is not running (outside an outage, whose own restart starts everything stopped), and counts what it
 * restarted.
 */
import { KubeClient, loadKubeConfig } from "../../kube/index.ts";
import {
  clusterComponents,
  clusterDown,
  clusterStatus,
  clusterUp,
  startStoppedComponents,
} from "../../tools/lib/cluster.ts";
import { waitFor } from "../support/cluster.ts";

export type ControlPlaneComponent = "kube-apiserver" | "etcd";

const started = new Set<string>();

/** What one outage took. */
export interface Outage {
  /** From the SIGKILL until `kwokctl start` was called. */
  readonly downMs: number;
  /** From `kwokctl start` until /readyz answered ok. */
  readonly restartMs: number;
  /** When /readyz answered ok again (performance.now()). */
  readonly recoveredAt: number;
}

/** A local cluster of a scenario's own, supervised. */
export interface OwnCluster {
  readonly name: string;
  readonly client: KubeClient;
  readonly kubeconfig: string;
  /** Components that exited by themselves (`kube-scheduler`, ...) and were started again. */
  readonly restarted: readonly string[];
  /**
   * SIGKILLs `component`, keeps it down `downMs`, starts it again and waits for /readyz. Only the pid from the
   * cluster's own pid file is killed, and only while its command line names the cluster.
   */
  outage(component: ControlPlaneComponent, downMs: number): Promise<Outage>;
  /** Stops supervising (the cluster stays up). */
  stop(): Promise<void>;
}

/**
 * Cluster `name` of this checkout (`npm run cluster -- up --name NAME`), up and supervised, so its outages hit
 * nothing else that runs against the suite's cluster. It stays up for the next scenario; {@link downOwnClusters}
 * (a suite's `after`, which runs once every test's own cleanup is done) takes down those started here.
 */
export async function ownCluster(name: string): Promise<OwnCluster> {
  if (!(await clusterStatus(name)).healthy) started.add(name);
  const status = await clusterUp(name);
  const held = new Set<string>();
  const restarted: string[] = [];
  let stopped = false;
  // One `kwokctl start` at a time: the supervisor's and an outage's restarts never overlap.
  let starting: Promise<void> = Promise.resolve();
  const start = () => (starting = starting.then(() => startStoppedComponents(name)));
  const supervisor = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // Not during an outage: `kwokctl start` starts every stopped component, the held one too; the outage's own
      // restart starts whatever else exited meanwhile.
      if (held.size > 0 || stopped) continue;
      const down = clusterComponents(name).filter((c) => !c.running);
      if (down.length === 0) continue;
      restarted.push(...down.map((c) => c.name));
      await start().catch(() => undefined); // tried again on the next round
    }
  })();

  return {
    name,
    client: new KubeClient(loadKubeConfig({ path: status.kubeconfig })),
    kubeconfig: status.kubeconfig,
    restarted,
    async outage(component, downMs) {
      const found = clusterComponents(name).find((c) => c.name === component);
      if (!found?.running) throw new Error(`${component} of cluster ${name} is not running: nothing to kill`);
      held.add(component);
      try {
        const killedAt = performance.now();
        process.kill(found.pid, "SIGKILL");
        // Gone, or a zombie: nothing here may reap it (its parent, kwokctl, exited long ago).
        const gone = () => !clusterComponents(name).some((c) => c.name === component && c.running);
        await waitFor(`${component} (pid ${found.pid}) to be gone`, async () => (gone() ? true : undefined), {
          timeoutMs: 30_000,
        });
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, downMs - (performance.now() - killedAt))));
        const restarting = performance.now();
        const alsoDown = clusterComponents(name).filter((c) => !c.running && c.name !== component);
        restarted.push(...alsoDown.map((c) => c.name));
        await start();
        const recoveredAt = performance.now();
        const restartedNow = clusterComponents(name).find((c) => c.name === component);
        if (!restartedNow?.running || restartedNow.pid === found.pid) {
          throw new Error(`${component} did not start again`);
        }
        return { downMs: restarting - killedAt, restartMs: recoveredAt - restarting, recoveredAt };
      } finally {
        held.delete(component);
      }
    },
    async stop() {
      stopped = true;
      await supervisor;
      await starting.catch(() => undefined);
    },
  };
}

/** Takes down every cluster {@link ownCluster} started. */
export async function downOwnClusters(): Promise<void> {
  for (const name of started) await clusterDown(name);
  started.clear();
}
