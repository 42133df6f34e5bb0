/**
 * Control-plane outages of the local cluster the tests run against: one of its processes (kube-apiserver or etcd)
 * SIGKILLed by pid, kept down for a while, then started again the way `npm run cluster -- up` starts a stopped
 * cluster (`kwokctl start cluster`, which starts only what is not running), until /readyz answers ok.
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

/**
 * A local cluster of the scenario's own (`npm run cluster -- up --name NAME`), so its outages hit nothing else that
 * runs against the suite's cluster. Returns its admin client and kubeconfig. It stays up for the next scenario;
 * {@link downOwnClusters} (a suite's `after`, which runs once every test's own cleanup is done) takes down those
 * started here.
 */
export async function ownCluster(name: string): Promise<{ client: KubeClient; kubeconfig: string }> {
  if (!(await clusterStatus(name)).healthy) started.add(name);
  const status = await clusterUp(name);
  return { client: new KubeClient(loadKubeConfig({ path: status.kubeconfig })), kubeconfig: status.kubeconfig };
}

/** Takes down every cluster {@link ownCluster} started. */
export async function downOwnClusters(): Promise<void> {
  for (const name of started) await clusterDown(name);
  started.clear();
}

/** What one outage took. */
export interface Outage {
  /** From the SIGKILL until `kwokctl start` was called. */
  readonly downMs: number;
  /** From `kwokctl start` until /readyz answered ok. */
  readonly restartMs: number;
  /** When /readyz answered ok again (performance.now()). */
  readonly recoveredAt: number;
}

/**
 * SIGKILLs `component` of local cluster `name`, keeps it down `downMs`, starts it again and waits for /readyz.
 * Only the pid from the cluster's own pid file is killed, and only while its command line names the cluster.
 */
export async function outage(name: string, component: ControlPlaneComponent, downMs: number): Promise<Outage> {
  const found = clusterComponents(name).find((c) => c.name === component);
  if (!found?.running) throw new Error(`${component} of cluster ${name} is not running: nothing to kill`);
  const killedAt = performance.now();
  process.kill(found.pid, "SIGKILL");
  // Gone, or a zombie: nothing here may reap it (its parent, kwokctl, exited long ago).
  const gone = () => !clusterComponents(name).some((c) => c.name === component && c.running);
  await waitFor(`${component} (pid ${found.pid}) to be gone`, async () => (gone() ? true : undefined), {
    timeoutMs: 30_000,
  });
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, downMs - (performance.now() - killedAt))));
  const restarting = performance.now();
  await startStoppedComponents(name);
  const recoveredAt = performance.now();
  const restarted = clusterComponents(name).find((c) => c.name === component);
  if (!restarted?.running || restarted.pid === found.pid) throw new Error(`${component} did not start again`);
  return { downMs: restarting - killedAt, restartMs: recoveredAt - restarting, recoveredAt };
}
