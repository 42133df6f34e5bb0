/** `npm run cluster -- status` shows the operator: local processes of this checkout with their /readyz, and Deployments. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import { freePort } from "../../../tools/lib/operator-launcher.ts";
import { localOperators, operatorLines, probeAddress } from "../../../tools/lib/operator-status.ts";
import { repoRoot } from "../../../tools/lib/paths.ts";

describe("probeAddress", () => {
  it("reads --health-probe-bind-address in either form, and asks an every-interface address on 127.0.0.1", () => {
    assert.equal(probeAddress(["node", "tools/operator.ts"]), "127.0.0.1:8081");
    assert.equal(
      probeAddress(["node", "tools/operator.ts", "--health-probe-bind-address=127.0.0.1:4000"]),
      "127.0.0.1:4000",
    );
    assert.equal(probeAddress(["node", "tools/operator.ts", "--health-probe-bind-address", ":9000"]), "127.0.0.1:9000");
    assert.equal(probeAddress(["--health-probe-bind-address=0.0.0.0:9001"]), "127.0.0.1:9001");
  });
});

describe("localOperators", () => {
  it("finds `npm run operator` of this checkout by its command line, with its /readyz", async (t) => {
    // GIVEN a process of this checkout started as `node tools/operator.ts --health-probe-bind-address=...` (a
    // stand-in that answers /readyz as the operator does)
    const port = await freePort();
    const standIn = `require("node:http").createServer((q, s) => s.end(q.url === "/readyz" ? "ok" : "?")).listen(${port}, "127.0.0.1", () => console.log("up"))`;
    const child = spawn(
      process.execPath,
      ["-e", standIn, "tools/operator.ts", `--health-probe-bind-address=127.0.0.1:${port}`],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] },
    );
    t.after(() => child.kill());
    await once(child.stdout, "data");

    // WHEN the operators are looked for
    const found = (await localOperators()).find((o) => o.pid === child.pid);

    // THEN it is there, started by `npm run operator`, ready
    assert.deepEqual(found, {
      pid: child.pid,
      startedBy: "npm run operator",
      probe: `127.0.0.1:${port}`,
      readyz: "ok",
    });

    // AND once it is gone it is not
    child.kill();
    await once(child, "exit");
    assert.equal(
      (await localOperators()).find((o) => o.pid === child.pid),
      undefined,
    );
  });
});

describe("operatorLines", () => {
  it("says when no local operator runs, and that an in-cluster one on kwok never runs its pods", () => {
    const lines = operatorLines(
      [],
      [{ namespace: "myapp-system", name: "myapp-operator", readyReplicas: 1, replicas: 1, image: "r/op:1" }],
    );
    assert.deepEqual(lines, [
      "operator (local)         none running: nothing reconciles here (npm start, or npm run operator)",
      "operator (in-cluster)    myapp-system/myapp-operator 1/1 ready, r/op:1 (simulated by kwok: its pods never run here)",
    ]);
  });

  it("names a local operator's pid, how it was started and its /readyz", () => {
    const lines = operatorLines(
      [{ pid: 42, startedBy: "npm start", probe: "127.0.0.1:4000", readyz: "HTTP 503: [-]informers not synced" }],
      "unknown: the cluster does not answer",
    );
    assert.deepEqual(lines, [
      "operator (local)         pid 42       npm start, /readyz on 127.0.0.1:4000: HTTP 503: [-]informers not synced",
      "operator (in-cluster)    unknown: the cluster does not answer",
    ]);
  });
});
