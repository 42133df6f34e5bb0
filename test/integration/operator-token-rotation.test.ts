/**
 * Token rotation, on the real local cluster: the operator runs as a ServiceAccount whose token lives in a token
 * file (as the local launcher runs it, tools/lib/operator-process.ts). Its token is revoked (the apiserver answers
 * 401 from then on), a spec change arrives, and only after the operator met the 401 does a new token land in the
 * file. The operator re-reads the file by itself: the change is acted on, the instance never turns Degraded, and
 * the process never exits. The same story with a token that really expires (600 s, the apiserver's floor) and a
 * fleet is the chaos suite's token-expiry scenario (test/chaos).
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { chartKindName, defaultChartKinds } from "../../api/index.ts";
import { localDir } from "../../tools/lib/paths.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  isReadyAtSpec,
  patchSpec,
  recordInstance,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";
import { rotatingToken } from "../support/rotating-token.ts";

const recorder = fileURLToPath(new URL("../support/request-recorder.ts", import.meta.url));
const minutes = (n: number) => n * 60_000;

test(
  "a revoked token: the operator takes the renewed token file by itself, never Degraded",
  { timeout: minutes(8) },
  async (t) => {
    const client = adminClient();
    const namespace = await testNamespace(t, client, "token");
    const token = await rotatingToken(t, client, namespace);
    const requests = path.join(localDir, `requests-${namespace}.jsonl`);
    writeFileSync(requests, "");
    t.after(() => rmSync(requests, { force: true }));
    const unauthorized = () =>
      readFileSync(requests, "utf8")
        .split("\n")
        .filter((l) => l.includes('"status":401'));

    // GIVEN the operator on a token file, and an instance it made Ready
    const operator = await startOperator(t, {
      namespaces: [namespace],
      leaderElection: false,
      // The ServiceAccount holds the default RBAC, which grants the default chart kinds only.
      args: [`--kubeconfig=${token.kubeconfigFile}`, `--chart-kinds=${defaultChartKinds.map(chartKindName).join(",")}`],
      env: { NODE_OPTIONS: `--import=${recorder}`, MYAPP_RECORD_REQUESTS: requests },
    });
    await createInstance(client, namespace, "web", { image: "nginx:1.27", replicas: 2 });
    await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec, minutes(2));
    assert.deepEqual(unauthorized(), [], "no 401 while the token is good");
    const recording = await recordInstance(client, namespace, "web", t);

    // WHEN its token is revoked, and a change arrives while the file still holds the dead token
    const dead = token.current;
    await token.revoke(dead);
    await waitFor("the apiserver to reject the revoked token", async () =>
      (await token.rejected(dead)) ? true : undefined,
    );
    await patchSpec(client, namespace, "web", { image: "nginx:1.28" });
    await waitFor("the operator to meet the 401", async () => (unauthorized().length > 0 ? true : undefined), {
      timeoutMs: minutes(2),
    });
    // ... and only then the renewal writes a new token
    await token.rotate();

    // THEN the change is acted on with the new token, without a restart and without Degraded
    const ready = await waitForInstance(client, namespace, "web", "Ready at nginx:1.28", isReadyAtSpec, minutes(3));
    assert.equal(ready.status?.image, "nginx:1.28");
    await recording.stop(ready);
    const degraded = recording.versions.filter((v) => conditionOf(v, "Degraded")?.status === "True");
    assert.deepEqual(
      degraded.map((v) => conditionOf(v, "Degraded")),
      [],
      "a dead token is transient: never Degraded",
    );
    const exited = await Promise.race([operator.exited, Promise.resolve(undefined)]);
    assert.equal(exited, undefined, `the operator kept running: ${operator.logTail()}`);
    t.diagnostic(`401 answers before the renewal: ${unauthorized().length}`);
  },
);
