/**
 * The operator's memory at fleet size, to size its container: the real operator process (`node operator/main.ts`,
 * NODE_ENV=production, leader election on, as the component runs it) converges N instances (1 replica each, no
 * storage, created 20 at a time) in a fresh namespace; its VmRSS/VmHWM are sampled every 2 s from /proc until every
 * instance is Ready (or `BENCH_READY_TIMEOUT_S`, default 1800, passes; memory is what is measured, not speed).
 * Then it reports peak and converged RSS, API writes per instance, and deletes the namespace with the operator
 * still running (its finalizers). Prints one JSON line.
 *
 *   KUBECONFIG=$PWD/.local/kubeconfig npx node bench/operator-fleet-memory.ts 1000
 *
 * operator/README.md records the figures and the per-instance cost derived from two sizes.
 */
import { apiVersion, findCondition, kind, type MyAppInstanceStatus } from "../api/index.ts";
import type { KubeObject } from "../kube/index.ts";
import { adminClient, benchFieldManager, createNamespace, deleteNamespace, ensureCrd } from "./support/cluster.ts";
import { startOperator, waitForReady } from "./support/operator-process.ts";
import { scrape, sum } from "./support/prometheus.ts";

const instances = Number(process.argv[2] ?? 1000);
const readyTimeoutMs = Number(process.env.BENCH_READY_TIMEOUT_S ?? 1800) * 1000;
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
const signal = new AbortController().signal;
const client = adminClient();
await ensureCrd(client, signal);
const namespace = await createNamespace(client, "fleet");
process.env.NODE_ENV = "production";
const operator = await startOperator({
  namespaces: [namespace],
  args: ["--leader-elect", `--leader-election-namespace=${namespace}`],
  signal,
});
await waitForReady(operator, signal);
const idle = operator.memory();
const started = performance.now();
let peak = 0;
let ready = 0;
const sample = () => {
  const memory = operator.memory();
  if (memory) peak = Math.max(peak, memory.peakRss);
};
const sampler = setInterval(sample, 2000);
try {
  const names = Array.from({ length: instances }, (_, i) => `app-${String(i).padStart(5, "0")}`);
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(
      names.slice(i, i + 20).map((name) =>
        client.create(
          {
            apiVersion,
            kind,
            metadata: { name, namespace },
            spec: { image: "nginx:1.27", replicas: 1, port: 8080 },
          },
          { fieldManager: benchFieldManager },
        ),
      ),
    );
  }
  const createdS = (performance.now() - started) / 1000;
  while (performance.now() - started < readyTimeoutMs) {
    const list = await client.list<KubeObject & { status?: MyAppInstanceStatus }>(apiVersion, kind, { namespace });
    ready = list.items.filter((i) => findCondition(i.status?.conditions, "Ready")?.status === "True").length;
    process.stderr.write(`\r${ready}/${instances} Ready, peak RSS ${mib(peak)} MiB   `);
    if (ready === instances) break;
    await new Promise((resolve) => setTimeout(resolve, 5000));
  }
  const allReadyS = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  sample();
  const samples = await scrape(operator.metricsUrl);
  const writes = sum(samples, "myapp_operator_api_writes_total", (l) => l.kind !== "Lease");
  console.log(
    JSON.stringify({
      instances,
      ready,
      createdS: Math.round(createdS),
      allReadyS: Math.round(allReadyS),
      idleRssMiB: mib(idle?.rss ?? 0),
      peakRssMiB: mib(peak),
      convergedRssMiB: mib(operator.memory()?.rss ?? 0),
      writesPerInstance: Math.round((writes / instances) * 100) / 100,
      load: (await import("node:os")).loadavg().map((l) => Math.round(l * 10) / 10),
    }),
  );
} finally {
  clearInterval(sampler);
  await deleteNamespace(client, namespace);
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    const left = await client.list(apiVersion, kind, { namespace, limit: 1 }).catch(() => undefined);
    if (!left || left.items.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 5000));
  }
  await operator.stop();
  await client.close();
}
