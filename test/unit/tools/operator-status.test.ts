/** `npm run cluster -- status` shows the operator: local processes of this checkout with their /readyz, and Deployments. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import { freePort } from "../../../tools/lib/operator-launcher.ts";
import { localOperators, operatorLines, operatorProcesses, probeAddress } from "../../../tools/lib/operator-status.ts";
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

describe("localOperators, under npm's shell", () => {
  it("shows one `npm run operator` once: the shell npm runs it through is not an operator", async (t) => {
    // GIVEN the stand-in started as npm starts a script: `sh -c "node ... tools/operator.ts ..."`, the shell staying
    const port = await freePort();
    const standIn = `require("node:http").createServer((q, s) => s.end("ok")).listen(${port}, "127.0.0.1", () => console.log("up"))`;
    const child = spawn(
      "sh",
      [
        "-c",
        `"${process.execPath}" -e "$STAND_IN" tools/operator.ts --health-probe-bind-address=127.0.0.1:${port}; true`,
      ],
      {
        cwd: repoRoot,
        stdio: ["ignore", "pipe", "inherit"],
        env: { ...process.env, STAND_IN: standIn },
        detached: true,
      },
    );
    t.after(() => process.kill(-child.pid!)); // the shell and the node under it
    await once(child.stdout, "data");

    // WHEN the operators are looked for
    const found = (await localOperators()).filter((o) => o.probe === `127.0.0.1:${port}`);

    // THEN the node process is there, once, and the shell is not
    assert.equal(found.length, 1);
    assert.notEqual(found[0]!.pid, child.pid);
    assert.equal(found[0]!.readyz, "ok");
  });
});

describe("operatorProcesses", () => {
  it("takes node for an operator, not npm's shell around it, and of a wrapper passing the script on only the last", () => {
    // GIVEN `npm run operator` (npm → sh -c "node tools/operator.ts ..." → node), a wrapper chain
    // (npx tsx tools/operator.ts → node ... tools/operator.ts), and an absolute script path
    const processes = [
      { pid: 10, ppid: 1, argv: ["npm", "run", "operator"] },
      { pid: 11, ppid: 10, argv: ["sh", "-c", "node tools/operator.ts --namespaces=default"] },
      { pid: 12, ppid: 11, argv: ["node", "tools/operator.ts", "--namespaces=default"] },
      { pid: 20, ppid: 1, argv: ["node", "/usr/bin/npx", "tsx", "tools/operator.ts"] },
      { pid: 21, ppid: 20, argv: ["node", "--import", "tsx", "tools/operator.ts"] },
      { pid: 30, ppid: 1, argv: ["/usr/bin/node", "/src/app/tools/operator.ts"] },
      { pid: 40, ppid: 1, argv: ["vim", "tools/operator.tsx"] },
      { pid: 41, ppid: 1, argv: ["tools/operator.ts"] },
    ];
    // WHEN the operators among them are picked
    // THEN each runs once, by its node process
    assert.deepEqual(operatorProcesses(processes), [12, 21, 30]);
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
