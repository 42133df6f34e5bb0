/**
 * A fault of the parsing thread while it checks a large values schema (it cannot start: out of threads or memory)
 * says nothing about the chart: the render fails as transient and the chart is not kept as refused, so the next
 * render, with the thread healthy again, goes through. (Node's Worker is replaced in this process only.)
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { chartArchive } from "../../support/chart-archive.ts";

const workerThreads = createRequire(import.meta.url)("node:worker_threads") as {
  Worker: new (url: URL, options: object) => object;
};
let broken = true;
const RealWorker = workerThreads.Worker;
workerThreads.Worker = class extends RealWorker {
  constructor(url: URL, options: object) {
    if (broken) throw Object.assign(new Error("Resource temporarily unavailable"), { code: "ERR_WORKER_INIT_FAILED" });
    super(url, options);
  }
};
syncBuiltinESMExports();
const { ChartRenderError, helmRenderer } = await import("../../../chart/index.ts");

test("a parsing thread that cannot start fails the render as transient, and the chart renders once it can", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "myapp-fake-helm-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const helm = path.join(dir, "helm");
  await writeFile(helm, "#!/bin/sh\nprintf -- '---\\n# Source: app/templates/cm.yaml\\nkind: ConfigMap\\n'\n");
  await chmod(helm, 0o755);
  // A schema of 200 KiB: checked on the thread (from 128 KiB on)
  const schema = JSON.stringify({ type: "object", description: "d".repeat(200 * 1024) });
  const chart = await chartArchive({
    "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    "app/values.schema.json": schema,
  });
  const renderer = helmRenderer({ binary: helm });
  const render = (n: number) => renderer.render({ chart, release: "r", namespace: "team-a", values: { n } });

  await assert.rejects(render(1), (error: unknown) => {
    assert.ok(error instanceof ChartRenderError, String(error));
    assert.equal(error.transient, true);
    assert.equal(error.message, "values.schema.json could not be checked: Resource temporarily unavailable");
    return true;
  });
  broken = false;
  assert.match((await render(2)).manifest, /kind: ConfigMap/);
});
