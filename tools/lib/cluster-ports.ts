/**
 * The ports a stopped local cluster will listen on again. kwokctl picks free ports when it creates a cluster and
 * keeps them: if another process took one meanwhile (another checkout's cluster, typically), `kwokctl start` waits
 * its three minutes for components that exit at once ("address already in use"). Checked first, so the error
 * names the port and the way out.
 */
import { createServer } from "node:net";
import { parseAllDocuments } from "yaml";

/** The `*Port` options of the KwokctlConfiguration in kwokctl's `kwok.yaml` of a cluster. */
export function recordedPorts(kwokYaml: string): number[] {
  const ports: number[] = [];
  for (const document of parseAllDocuments(kwokYaml)) {
    const config = document.toJS() as { kind?: unknown; options?: Record<string, unknown> } | null;
    if (config?.kind !== "KwokctlConfiguration") continue;
    for (const [key, value] of Object.entries(config.options ?? {})) {
      if (key.endsWith("Port") && typeof value === "number" && value > 0) ports.push(value);
    }
  }
  return ports.sort((a, b) => a - b);
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
