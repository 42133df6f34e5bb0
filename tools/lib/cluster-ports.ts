/**
 * The ports of local clusters. kwokctl picks free ports when it creates a cluster and keeps them: if another process
 * took one meanwhile (another checkout's cluster, typically), `kwokctl start` waits its three minutes for components
 * that exit at once ("address already in use"). Checked first, so the error names the port and the way out; and a
 * new cluster is given ports no other cluster of this checkout keeps, so creating one never takes a stopped one's.
 */
import { createServer } from "node:net";
import { parseAllDocuments } from "yaml";

/**
 * Each `*Port` option of the KwokctlConfiguration in kwokctl's `kwok.yaml` of a cluster, with the component that
 * listens on it (its pid file's name).
 */
export function recordedPortsOf(kwokYaml: string): { readonly port: number; readonly component: string }[] {
  const ports: { port: number; component: string }[] = [];
  for (const document of parseAllDocuments(kwokYaml)) {
    const config = document.toJS() as { kind?: unknown; options?: Record<string, unknown> } | null;
    if (config?.kind !== "KwokctlConfiguration") continue;
    for (const [key, value] of Object.entries(config.options ?? {})) {
      if (key.endsWith("Port") && typeof value === "number" && value > 0) {
        ports.push({ port: value, component: componentOf(key) });
      }
    }
  }
  return ports.sort((a, b) => a.port - b.port);
}

/** `kubeControllerManagerPort` → `kube-controller-manager`, `etcdPeerPort` → `etcd`: kwokctl's component names. */
function componentOf(key: string): string {
  const known = ["etcd", "kubeApiserver", "kubeControllerManager", "kubeScheduler", "kwokController"];
  const prefix = known.find((name) => key.startsWith(name)) ?? key.replace(/Port$/, "");
  return prefix.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** kwokctl's options for the ports a cluster of the binary runtime listens on (as in its `kwok.yaml`). */
export const clusterPortOptions = [
  "etcdPeerPort",
  "etcdPort",
  "kubeApiserverPort",
  "kwokControllerPort",
  "kubeControllerManagerPort",
  "kubeSchedulerPort",
] as const;

/**
 * Ports for a new cluster, one per {@link clusterPortOptions}: free now and not `kept` (the ports other clusters
 * of this checkout will listen on again), counting down from 32766 as kwokctl itself does.
 */
export async function portsForNewCluster(
  kept: ReadonlySet<number>,
  inUse: (ports: readonly number[]) => Promise<number[]> = portsInUse,
): Promise<Record<(typeof clusterPortOptions)[number], number>> {
  const chosen: number[] = [];
  for (let next = 32766; chosen.length < clusterPortOptions.length; next -= 16) {
    if (next < 1024) throw new Error("no free ports for a new cluster between 1024 and 32766");
    const candidates = Array.from({ length: 16 }, (_, i) => next - i).filter((port) => !kept.has(port));
    const taken = new Set(await inUse(candidates));
    chosen.push(...candidates.filter((port) => !taken.has(port)));
  }
  return Object.fromEntries(clusterPortOptions.map((option, i) => [option, chosen[i]])) as Record<
    (typeof clusterPortOptions)[number],
    number
  >;
}

/** A KwokctlConfiguration with only these ports, merged by kwokctl over the cluster's own (`--config` twice). */
export function portsConfig(ports: Readonly<Record<string, number>>): string {
  return [
    "apiVersion: config.kwok.x-k8s.io/v1alpha1",
    "kind: KwokctlConfiguration",
    "options:",
    ...Object.entries(ports).map(([option, port]) => `  ${option}: ${port}`),
    "",
  ].join("\n");
}

/** Those of `ports` that another process listens on at 127.0.0.1. */
export async function portsInUse(ports: readonly number[]): Promise<number[]> {
  const taken = await Promise.all(
    ports.map(
      (port) =>
        new Promise<boolean>((resolve) => {
          const probe = createServer();
          probe.once("error", () => resolve(true));
          probe.listen({ port, host: "127.0.0.1", exclusive: true }, () => probe.close(() => resolve(false)));
        }),
    ),
  );
  return ports.filter((_, i) => taken[i]);
}
