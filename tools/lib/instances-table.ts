/** The table `npm start` prints: every MyAppInstance as the cluster sees it. */
import type { KubeClient, KubeObject } from "../../kube/index.ts";
import { formatObjectKey } from "../../kube/object-key.ts";
import { byCodeUnits } from "../../api/code-unit-order.ts";

export interface InstanceRow {
  readonly namespace: string;
  readonly name: string;
  readonly image: string;
  readonly ready: string;
  readonly phase: string;
  readonly endpoint: string;
}

type Instance = KubeObject & {
  spec: { image: string; replicas?: number; port?: number };
  status?: { readyReplicas?: number; phase?: string };
};
type Service = KubeObject & { spec: { ports?: { port: number }[] } };

export async function instanceRows(client: KubeClient): Promise<InstanceRow[]> {
  const [instances, services] = await Promise.all([
    client.list<Instance>("example.com/v1", "MyAppInstance"),
    client.list<Service>("v1", "Service", { labelSelector: "app.kubernetes.io/managed-by=myapp-operator" }),
  ]);
  return instances.items
    .map((i) => {
      const ns = i.metadata.namespace!;
      const service = services.items.find(
        (s) => s.metadata.namespace === ns && s.metadata.ownerReferences?.some((o) => o.uid === i.metadata.uid),
      );
      const port = service?.spec.ports?.[0]?.port;
      return {
        namespace: ns,
        name: i.metadata.name!,
        image: i.spec.image,
        ready: `${i.status?.readyReplicas ?? 0}/${i.spec.replicas ?? 1}`,
        phase: i.status?.phase ?? "Pending",
        endpoint: service && port ? `${service.metadata.name}.${ns}.svc:${port}` : "-",
      };
    })
    .sort((a, b) => byCodeUnits(formatObjectKey(a), formatObjectKey(b)));
}

/** Fixed-width columns, header first; parseable back by splitting on runs of spaces. */
export function formatTable(rows: readonly InstanceRow[]): string {
  const header = ["NAMESPACE", "NAME", "IMAGE", "READY", "PHASE", "ENDPOINT"];
  const cells = [header, ...rows.map((r) => [r.namespace, r.name, r.image, r.ready, r.phase, r.endpoint])];
  const widths = header.map((_, c) => Math.max(...cells.map((row) => row[c]!.length)));
  return cells
    .map((row) =>
      row
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
