/**
 * A stopped local cluster keeps its ports. kwokctl records the ports it chose when it made a cluster and listens on
 * them again when it starts it: a cluster made while another was stopped (after a reboot, say) must not take them,
 * or the stopped one could not start again until the new one is gone.
 *
 * Makes two clusters of its own beside the test run's and deletes them again.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { recordedPortsOf } from "../../tools/lib/cluster-ports.ts";
import { clusterComponents, clusterDown, clusterUp, localCluster } from "../../tools/lib/cluster.ts";
import { toolEnv, toolchainBinDir } from "../../tools/lib/paths.ts";
import { run } from "../../tools/lib/run.ts";

const suffix = randomBytes(3).toString("hex");
const stopped = `ports-a-${suffix}`;
const made = `ports-b-${suffix}`;
after(async () => {
  await clusterDown(made);
  await clusterDown(stopped);
});

const portsOf = (name: string) =>
  recordedPortsOf(readFileSync(path.join(localCluster(name).dir, "kwok.yaml"), "utf8")).map(({ port }) => port);

test("a cluster made while another is stopped leaves it its ports, and the stopped one starts again", async () => {
  // GIVEN a cluster, stopped as a reboot would leave it (its files kept, no process running)
  await clusterUp(stopped);
  const kept = portsOf(stopped);
  assert.equal(kept.length, 6, `kwokctl recorded its six ports: ${kept.join(", ")}`);
  const binDir = toolchainBinDir();
  await run(path.join(binDir, "kwokctl"), ["stop", "cluster", "--name", stopped], { env: toolEnv(binDir) });
  assert.deepEqual(
    clusterComponents(stopped).filter((component) => component.running),
    [],
    "no component of the stopped cluster runs",
  );

  // WHEN another cluster is made meanwhile
  await clusterUp(made);

  // THEN it listens on other ports, and the stopped one starts again on its own
  const taken = portsOf(made).filter((port) => kept.includes(port));
  assert.deepEqual(taken, [], "the new cluster took none of the stopped one's ports");
  const restarted = await clusterUp(stopped);
  assert.ok(restarted.healthy, `the stopped cluster is up again: ${restarted.readyz}`);
  assert.deepEqual(portsOf(stopped), kept, "on the ports it had");
});
