/**
 * The README's main command, end to end on a clean state: `npm start` brings up the dev stack and prints a table
 * that matches the cluster; `npm run down --keep-cluster` removes the stack and stops the operator.
 * (It resets the local `dev` stack: run it on a machine where that is fine, as CI is.)
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../tools/lib/paths.ts";
import { operatorPid } from "../../tools/lib/operator-process.ts";
import { adminClient, type Typed } from "../support/cluster.ts";

function runScript(script: string, args: string[] = []): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, script), ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout }));
  });
}

type Instance = Typed<{
  spec: { image: string; replicas: number };
  status?: { readyReplicas?: number; phase?: string };
}>;

test("npm start brings up the dev stack with every instance Ready and prints what the cluster says", async (t) => {
  const client = adminClient();
  t.after(() => runScript("tools/down.ts", ["--keep-cluster"]));
  assert.equal((await runScript("tools/down.ts", ["--keep-cluster"])).code, 0, "clean state");

  const start = await runScript("tools/main.ts");
  assert.equal(start.code, 0, start.stdout);
  assert.ok(operatorPid(), "the operator runs as a local process");
  assert.ok(existsSync(path.join(repoRoot, ".local/operator.kubeconfig")), "with the ServiceAccount's kubeconfig");

  const lines = start.stdout.split("\n");
  const header = lines.findIndex((l) => l.startsWith("NAMESPACE"));
  assert.ok(header >= 0, `a table was printed:\n${start.stdout}`);
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(header + 1)) {
    if (!line.trim()) break;
    const cells = line.trim().split(/\s+/);
    rows.set(`${cells[0]}/${cells[1]}`, cells);
  }
  for (const name of ["web", "db"]) {
    const live = await client.get<Instance>("example.com/v1", "MyAppInstance", name, "default");
    const row = rows.get(`default/${name}`);
    assert.ok(row, `${name} is in the table`);
    const service = await client.get<Typed<{ spec: { ports: { port: number }[] } }>>("v1", "Service", name, "default");
    assert.deepEqual(row, [
      "default",
      name,
      live.spec.image,
      `${live.status?.readyReplicas}/${live.spec.replicas}`,
      "Running",
      `${name}.default.svc:${service.spec.ports[0]!.port}`,
    ]);
    assert.equal(live.status?.readyReplicas, live.spec.replicas, `${name} is Ready`);
  }

  const down = await runScript("tools/down.ts", ["--keep-cluster"]);
  assert.equal(down.code, 0);
  assert.equal(operatorPid(), undefined, "down stopped the operator");
  for (const name of ["web", "db"]) {
    assert.equal(await client.find("example.com/v1", "MyAppInstance", name, "default"), undefined, `${name} destroyed`);
  }
});
