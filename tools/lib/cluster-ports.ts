/**
 * The ports a stopped local cluster will listen on again. kwokctl picks free ports when it creates a cluster and
 * keeps them: if another process took one meanwhile (another checkout's cluster, typically), `kwokctl start` waits
 * its three minutes for components that exit at once ("address already in use"). Checked first, so the error
 * names the port and the way out.
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
