/** A benchmark run on its own (`node bench/<name>.ts`): measured and printed, nothing recorded. */
import type { Benchmark } from "./benchmark.ts";
import { adminClient } from "./cluster.ts";

/** Runs `benchmark` against KUBECONFIG's cluster, Ctrl-C cleaning up, and prints each figure. */
export async function runOnItsOwn(benchmark: Benchmark): Promise<void> {
  const interrupted = new AbortController();
  process.on("SIGINT", () => interrupted.abort());
  const startedAt = performance.now();
  const result = await benchmark.run({
    client: adminClient(),
    signal: interrupted.signal,
    log: (message) => {
      const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
      process.stderr.write(`[${benchmark.name} ${seconds}s] ${message}\n`);
    },
  });
  for (const metric of result.metrics) console.log(`${metric.label.padEnd(70)} ${metric.value} ${metric.unit}`);
}
