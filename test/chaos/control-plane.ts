/**
 * Control-plane outages on a local cluster of the scenario's own: one of its processes (kube-apiserver or etcd)
 * SIGKILLed by pid, kept down for a while, then started again the way `npm run cluster -- up` starts a stopped
 * cluster (`kwokctl start cluster`, which starts only what is not running), until /readyz answers ok.
 *
 * A real control plane runs under a supervisor (the kubelet of its static pods, systemd) that restarts whatever
 * exits; the local one has none, and kube-scheduler and kube-controller-manager exit when an outage outlasts
 * their leader-election renew deadline. So while a scenario runs, a supervisor here restarts every component
 * that is not running (outside an outage, whose own restart starts everything stopped), and counts what it
 * restarted. It also gives pods that kwok, the kubelets' stand-in, left waiting the second look a kubelet's sync
 * would (kubelet-resync.ts), and counts those.
 */
import { createServer, type Server } from "node:net";
import { KubeClient, loadKubeConfig } from "../../kube/index.ts";
import {
  clusterComponents,
  clusterDown,
  clusterStatus,
  clusterUp,
  startStoppedComponents,
} from "../../tools/lib/cluster.ts";
import { processCommandLine } from "../../tools/lib/process-record.ts";
import { waitFor } from "../support/cluster.ts";
import { KubeletResync } from "./kubelet-resync.ts";

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
  /** Pods kwok left waiting that got a kubelet's second look (kubelet-resync.ts). */
  readonly podsResynced: () => number;
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
  // Clusters of other checkouts created at the same moment may pick the same free ports (kwokctl checks each
  // port when it picks it, not when the component binds it): a cluster that never gets healthy is made again.
  const status = await clusterUp(name).catch(async (error: unknown) => {
    if (!started.has(name)) throw error;
    await clusterDown(name);
    return clusterUp(name);
  });
  const held = new Set<string>();
  const restarted: string[] = [];
  let stopped = false;
  // One `kwokctl start` at a time: the supervisor's and an outage's restarts never overlap.
  let starting: Promise<void> = Promise.resolve();
  const start = () => (starting = starting.then(() => startStoppedComponents(name)));
  const client = new KubeClient(loadKubeConfig({ path: status.kubeconfig }));
  const resync = new KubeletResync(client);
  const supervisor = (async () => {
    for (let round = 1; !stopped; round++) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // As often as a kubelet retries its status writes; a cluster that is down is looked at again next time.
      if (round % 5 === 0) await resync.round().catch(() => undefined);
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
    client,
    kubeconfig: status.kubeconfig,
    restarted,
    podsResynced: () => resync.touched,
    async outage(component, downMs) {
      const found = clusterComponents(name).find((c) => c.name === component);
      if (!found?.running) throw new Error(`${component} of cluster ${name} is not running: nothing to kill`);
      held.add(component);
      // The ports of every component, read before anything dies (a zombie has no command line).
      const ports = new Map(clusterComponents(name).map((c) => [c.name, listenPorts(c.pid)]));
      const reserved = new PortReservations();
      try {
        const killedAt = performance.now();
        process.kill(found.pid, "SIGKILL");
        // Gone, or a zombie: nothing here may reap it (its parent, kwokctl, exited long ago).
        const gone = () => !clusterComponents(name).some((c) => c.name === component && c.running);
        await waitFor(`${component} (pid ${found.pid}) to be gone`, async () => (gone() ? true : undefined), {
          timeoutMs: 30_000,
        });
        // Down, its ports are free for anyone: another checkout's kwokctl, creating a cluster right now, may take
        // them, and the restart would fail with "address already in use". Hold them (and those of whatever else
        // exits meanwhile) until the restart; a connection to them is reset, as to a dead process.
        while (performance.now() - killedAt < downMs) {
          for (const c of clusterComponents(name)) if (!c.running) await reserved.hold(ports.get(c.name) ?? []);
          await new Promise((resolve) =>
            setTimeout(resolve, Math.max(1, Math.min(500, downMs - (performance.now() - killedAt)))),
          );
        }
        const restarting = performance.now();
        const alsoDown = clusterComponents(name).filter((c) => !c.running && c.name !== component);
        restarted.push(...alsoDown.map((c) => c.name));
        for (const c of alsoDown) await reserved.hold(ports.get(c.name) ?? []);
        await reserved.release();
        await start();
        const recoveredAt = performance.now();
        const restartedNow = clusterComponents(name).find((c) => c.name === component);
        if (!restartedNow?.running || restartedNow.pid === found.pid) {
          throw new Error(`${component} did not start again`);
        }
        return { downMs: restarting - killedAt, restartMs: recoveredAt - restarting, recoveredAt };
      } finally {
        await reserved.release();
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

/**
 * The ports a component of a local cluster listens on, from its command line (`--secure-port=N`, and the
 * `127.0.0.1:N` of its listen and serving addresses). Ports it only connects to (the apiserver's etcd) may be among
 * them: holding those fails while their owner runs, and is skipped.
 */
function listenPorts(pid: number): number[] {
  const args = processCommandLine(pid).split(" ");
  const ports = new Set<number>();
  for (const arg of args) {
    if (/^--(etcd-servers|kubeconfig|master)=/.test(arg)) continue;
    for (const match of arg.matchAll(/(?:--(?:secure-)?port=|127\.0\.0\.1:)(\d+)/g)) ports.add(Number(match[1]));
  }
  return [...ports];
}

/** Listeners that keep ports taken, resetting every connection. */
class PortReservations {
  private readonly servers = new Map<number, Server>();

  async hold(ports: readonly number[]): Promise<void> {
    for (const port of ports) {
      if (this.servers.has(port)) continue;
      const server = createServer((socket) => socket.destroy());
      const held = await new Promise<boolean>((resolve) => {
        server.once("error", () => resolve(false)); // still in use (its owner runs, or another took it)
        server.listen(port, "127.0.0.1", () => resolve(true));
      });
      if (held) this.servers.set(port, server);
    }
  }

  async release(): Promise<void> {
    const servers = [...this.servers.values()];
    this.servers.clear();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** Takes down every cluster {@link ownCluster} started. */
export async function downOwnClusters(): Promise<void> {
  for (const name of started) await clusterDown(name);
  started.clear();
}
