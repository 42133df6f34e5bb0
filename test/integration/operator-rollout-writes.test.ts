/**
 * What a rollout costs in API writes, with the operator as a process against the local cluster: an image change
 * of a Ready instance is the Deployment apply, the status that turns it Progressing (Ready=False), the status that
 * turns it Ready at the new image, and the RolloutComplete event. The counts that move in between (a new pod
 * counted, then ready, the old one gone) are superseded within moments and are not each written
 * (reconcile/status-pacing.ts), and the apply of a new image has no Updated event beside the rollout's own. A rollout
 * that outlasts the pacing interval (a busy machine) may write its counts once per interval besides: those writes
 * are allowed, and checked to be progress only and paced.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { scrape, sumBy } from "../../bench/support/prometheus.ts";
import { fieldManager, statusProgressIntervalMs } from "../../operator/reconcile/index.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  instanceWrites,
  isReadyAtSpec,
  patchSpec,
  recordInstance,
  startOperator,
  waitForInstance,
  type Instance,
  type OperatorProcess,
} from "../support/operator.ts";

const client = adminClient();

/** The instance writes once none has been made for 3 s (the last reconcile's trailing event is in). */
async function settledWrites(operator: OperatorProcess): Promise<number> {
  let last = await instanceWrites(operator);
  let since = Date.now();
  return waitFor(
    "3 s without an instance write",
    async () => {
      const writes = await instanceWrites(operator);
      if (writes !== last) [last, since] = [writes, Date.now()];
      return Date.now() - since >= 3000 ? writes : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

/** When the operator's status write that made `version` was stored (its managed-fields entry; whole seconds). */
function statusWrittenAt(version: Instance): number {
  const entries = (version.metadata.managedFields ?? []) as { manager?: string; subresource?: string; time?: string }[];
  const entry = entries.find((e) => e.manager === fieldManager && e.subresource === "status");
  return Date.parse(entry?.time ?? "");
}

/** What a status says beyond progress (the counts and the messages that quote them). */
function verdictOf({ status }: Instance) {
  const { phase, image, observedGeneration, conditions = [] } = status ?? {};
  return {
    phase,
    image,
    observedGeneration,
    conditions: conditions.map(({ type, status, reason }) => ({ type, status, reason })),
  };
}

test("rolling an instance to a new image costs 4 writes: apply, Progressing, Ready, RolloutComplete", async (t) => {
  const namespace = await testNamespace(t, client, "op-rollout-writes");
  const operator = await startOperator(t, { namespaces: [namespace] });
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  await waitForInstance(client, namespace, "web", "Ready on 1.27", isReadyAtSpec);
  const before = await settledWrites(operator);
  const byKindBefore = sumBy(await scrape(operator.metricsUrl), "myapp_operator_api_writes_total", "kind");

  // WHEN the image changes (every status write from now on is recorded)
  const recording = await recordInstance(client, namespace, "web", t);
  const patched = await patchSpec(client, namespace, "web", { image: "nginx:1.28" });
  const ready = await waitForInstance(client, namespace, "web", "Ready on 1.28", isReadyAtSpec);
  const after = await settledWrites(operator);
  await recording.stop(ready);

  // THEN the rollout cost 4 writes (was 7 or more: an Updated event and a status with a RollingOut event per count),
  // plus any progress pacing let through: the status writes for the new generation between the first (Ready=False)
  // and the last (Ready=True) may only report counts, each at least the pacing interval after the previous one
  // (times the apiserver stamped, truncated to whole seconds: a gap of 5 s or more never reads as less)
  const byKindAfter = sumBy(await scrape(operator.metricsUrl), "myapp_operator_api_writes_total", "kind");
  const byKind = Object.fromEntries(
    Object.entries(byKindAfter)
      .filter(([kind]) => kind !== "Lease")
      .map(([kind, total]) => [kind, total - (byKindBefore[kind] ?? 0)])
      .filter(([, writes]) => writes !== 0),
  );
  const forNewSpec = recording.versions.filter(
    (v: Instance) => v.status?.observedGeneration === patched.metadata.generation,
  );
  const first = forNewSpec[0];
  assert.ok(first, "a status for the new generation was written");
  assert.equal(forNewSpec.at(-1)?.metadata.resourceVersion, ready.metadata.resourceVersion, "none after Ready");
  const paced = forNewSpec.slice(1, -1);
  paced.forEach((version, index) => {
    const previous = forNewSpec[index]!;
    assert.deepEqual(verdictOf(version), verdictOf(previous), "an extra status write reports progress only");
    const gapMs = statusWrittenAt(version) - statusWrittenAt(previous);
    assert.ok(gapMs >= statusProgressIntervalMs, `a progress write ${gapMs} ms after the previous status write`);
  });
  if (paced.length > 0) t.diagnostic(`${paced.length} paced progress write(s) during a slow rollout`);
  const writes = `writes of the rollout by kind: ${JSON.stringify(byKind)}`;
  assert.deepEqual(byKind, { Deployment: 1, MyAppInstance: 2 + paced.length, Event: 1 }, writes);
  assert.equal(after - before, 4 + paced.length, writes);

  // and the status stayed truthful: the first for the new generation is Ready=False with the rollout's message,
  // the last Ready=True at the new image
  assert.equal(conditionOf(first, "Ready")?.status, "False");
  assert.match(conditionOf(first, "Ready")?.message ?? "", /^rolling out nginx:1\.28/);
  assert.equal(conditionOf(ready, "Ready")?.status, "True");
  assert.equal(conditionOf(ready, "Ready")?.observedGeneration, patched.metadata.generation);
  assert.equal(ready.status?.image, "nginx:1.28");
});
