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
import type { KubeObject } from "../../kube/index.ts";
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

/**
 * The instance writes (every kind but Lease) once `ended` holds and every Event about the instance stored since
 * `since` has been counted: the last writes of a phase are its final status write and the Events that announce it
 * (recorded fire-and-forget, after that status write is sent), so once both are stored and counted nothing of the
 * phase is left to count.
 */
async function writesOnce(
  operator: OperatorProcess,
  namespace: string,
  what: string,
  ended: () => Promise<boolean>,
  since: { readonly events: number; readonly byKind: Record<string, number> },
): Promise<number> {
  return waitFor(
    what,
    async () => {
      if (!(await ended())) return undefined;
      const sent = sumBy(await scrape(operator.metricsUrl), "myapp_operator_api_writes_total", "kind");
      const stored = (await eventsAbout(namespace, "web")).length;
      if ((sent["Event"] ?? 0) - (since.byKind["Event"] ?? 0) < stored - since.events) return undefined;
      return instanceWrites(operator);
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
}

/** Whether a reconcile's log line lists `change` among its changes. */
function changed(line: Record<string, unknown>, change: string): boolean {
  return Array.isArray(line["changes"]) && line["changes"].includes(change);
}

type EventObject = KubeObject & { reason?: string; regarding?: { kind?: string; name?: string } };

/** The Events about instance `name` stored in `namespace` (the operator's: not its Deployment's, of the same name). */
async function eventsAbout(namespace: string, name: string): Promise<EventObject[]> {
  const { items } = await client.list<EventObject>("events.k8s.io/v1", "Event", { namespace });
  return items.filter((event) => event.regarding?.kind === "MyAppInstance" && event.regarding.name === name);
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
  // (a new instance's writes end with the status that says Running, which the reconcile that wrote it logs once sent)
  const before = await writesOnce(
    operator,
    namespace,
    "the status Running written",
    async () => operator.logs.some((line) => line.msg === "reconciled" && changed(line, "status Running")),
    { events: 0, byKind: {} },
  );
  const byKindBefore = sumBy(await scrape(operator.metricsUrl), "myapp_operator_api_writes_total", "kind");
  const eventsBefore = (await eventsAbout(namespace, "web")).length;

  // WHEN the image changes (every status write from now on is recorded)
  const recording = await recordInstance(client, namespace, "web", t);
  const patched = await patchSpec(client, namespace, "web", { image: "nginx:1.28" });
  const ready = await waitForInstance(client, namespace, "web", "Ready on 1.28", isReadyAtSpec);
  // (the rollout's writes end with its RolloutComplete Event, recorded after the status write that says Ready)
  const after = await writesOnce(
    operator,
    namespace,
    "the RolloutComplete Event stored",
    async () => (await eventsAbout(namespace, "web")).some((event) => event.reason === "RolloutComplete"),
    { events: eventsBefore, byKind: byKindBefore },
  );
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
