/**
 * Control-plane outages of the local cluster the tests run against: one of its processes (kube-apiserver or etcd)
 * SIGKILLed by pid, kept down for a while, then started again the way `npm run cluster -- up` starts a stopped
 * cluster (`kwokctl start cluster`, which starts only what is not running), until /readyz answers ok.
 */
import { clusterComponents, clusterNameOf, startStoppedComponents } from "../../tools/lib/cluster.ts";
import { waitFor } from "../support/cluster.ts";

export type ControlPlaneComponent = "kube-apiserver" | "etcd";

/** The local cluster of the test run (KUBECONFIG is its admin kubeconfig); an error if it is not one of ours. */
export function testCluster(): string {
  const kubeconfig = process.env.KUBECONFIG;
  const name = kubeconfig ? clusterNameOf(kubeconfig) : undefined;
  if (!name) {
    throw new Error(
      `KUBECONFIG (${kubeconfig ?? "unset"}) is not the admin kubeconfig of a local cluster of this checkout: ` +
        "the outage scenarios kill its processes, so they only run against `npm run cluster -- up`",
    );
  }
  return name;
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
 * SIGKILLs `component` of the test cluster, keeps it down `downMs`, starts it again and waits for /readyz.
 * Only the pid from the cluster's own pid file is killed, and only while its command line names the cluster.
 */
export async function outage(component: ControlPlaneComponent, downMs: number): Promise<Outage> {
  const name = testCluster();
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
