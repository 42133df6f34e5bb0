/**
 * Instances whose status someone other than the operator wrote. The platform grants tenants no right to
 * `myappinstances/status`, but an administrator may (a broad role), and another controller may add conditions of
 * its own. Before the CRD bounded the conditions, 36 conditions with 32,000-character messages on each of 110
 * instances (1.16 MB of status each) killed the operator, which kept the status whole in its cache, during its first
 * list, and again at each restart.
 *
 * (a) The apiserver refuses that status now, naming the field: at most 16 conditions (api/status.ts), and a
 * lastTransitionTime of at most 64 characters (`format: date-time` alone took any length).
 *
 * (b) What it still allows, at its largest, costs the operator little: the real cluster and operator process, as a
 * ServiceAccount with the component's RBAC, on a heap of 128 MiB (`--max-old-space-size=128`), with 130 instances
 * whose status has 15 conditions and a status.message of 32,768 two-byte characters each (~1 MiB of heap an
 * instance, before it starts: its first list). The cache keeps of the status only the operator's own condition types,
 * messages cut to 4,096 characters (operator/instance-as-read.ts). Then an instance beside them is Ready, and one of
 * them shows the operator's own view again, beside the other writer's conditions.
 *
 * 15 and not 16 conditions: the operator adds Reconciling while it works, and the list holds 16 at most.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiVersion, kind, type Condition } from "../../api/index.ts";
import { InvalidError } from "../../kube/index.ts";
import { adminClient, testNamespace, type Typed } from "../support/cluster.ts";
import {
  createInstance,
  ensureCrd,
  exitOf,
  isReadyAtSpec,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";
import { componentOperatorIdentity } from "../support/operator-identity.ts";

const client = adminClient();

type WithStatus = Typed<{ status?: { conditions?: Condition[]; message?: string } }>;

/** A condition as a writer other than the operator sets it. */
function theirs(type: string, message: string): Condition {
  return { type, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z", reason: "Theirs", message };
}

/** What the red team wrote: 36 conditions with 32,000-character messages (1.16 MB). */
const redTeamConditions = Array.from({ length: 36 }, (_, i) => theirs(`Junk${i}`, "m".repeat(32_000)));

/** A message of 32,768 characters, the schema's longest, in two bytes each (in UTF-8 and in V8's heap). */
const longest = (i: number) => `${i} ${"ж".repeat(32_768 - String(i).length - 1)}`;

/**
 * The largest status that leaves the operator room for its own conditions: its three steady ones (whose messages
 * it puts back) and 12 of another writer's, each message and status.message of {@link longest}.
 */
const largestStatus = {
  conditions: [
    ...["Ready", "Progressing", "Degraded"].map((type, i) => theirs(type, longest(i))),
    ...Array.from({ length: 12 }, (_, i) => theirs(`Junk${i}`, longest(3 + i))),
  ],
  message: longest(99),
};
const count = 130;

test("the apiserver refuses more conditions than 16 and an overlong time, naming the field", async (t) => {
  await ensureCrd(client);
  const namespace = await testNamespace(t, client, "fstatus-a");
  await createInstance(client, namespace, "s", { image: "nginx:1.27" });
  const patchStatus = (status: unknown) => client.mergePatch(apiVersion, kind, "s", namespace, { status }, "status");

  // The red team's status
  await assert.rejects(patchStatus({ conditions: redTeamConditions }), (error: unknown) => {
    assert.ok(error instanceof InvalidError, String(error));
    assert.match(error.message, /status\.conditions: Too many: 36: must have at most 16 items/);
    return true;
  });
  // A time as long as the message it stands beside
  const time = `2026-01-01T00:00:00Zt${"x".repeat(32_000)}`;
  await assert.rejects(
    patchStatus({ conditions: [{ ...theirs("Junk0", "m"), lastTransitionTime: time }] }),
    (error: unknown) => {
      assert.ok(error instanceof InvalidError, String(error));
      assert.match(error.message, /status\.conditions\[0\]\.lastTransitionTime: Too long/);
      return true;
    },
  );
  // A message one character longer than metav1.Condition's
  await assert.rejects(patchStatus({ conditions: [theirs("Junk0", "m".repeat(32_769))] }), (error: unknown) => {
    assert.ok(error instanceof InvalidError, String(error));
    assert.match(error.message, /status\.conditions\[0\]\.message: Too long/);
    return true;
  });
  // and the largest it allows is stored
  await patchStatus(largestStatus);
  const stored = await client.get<WithStatus>(apiVersion, kind, "s", namespace);
  assert.equal(stored.status?.conditions?.length, 15);
  assert.ok(Buffer.byteLength(JSON.stringify(stored.status)) > 1_000_000);
});

test(
  "instances with the largest status another writer may set cost the operator little",
  { timeout: 15 * 60_000 },
  async (t) => {
    await ensureCrd(client);
    const namespace = await testNamespace(t, client, "fstatus-b");
    for (let i = 0; i < count; i += 5) {
      await Promise.all(
        [0, 1, 2, 3, 4].map(async (j) => {
          const name = `s-${i + j}`;
          await createInstance(client, namespace, name, { image: "nginx:1.27" });
          await client.mergePatch(apiVersion, kind, name, namespace, { status: largestStatus }, "status");
        }),
      );
    }

    const identity = await componentOperatorIdentity(t, client, namespace, [
      { verb: "list", group: "example.com", resource: "myappinstances", namespace },
      { verb: "patch", group: "example.com", resource: "myappinstances", subresource: "status", namespace },
      { verb: "list", group: "storage.k8s.io", resource: "storageclasses" },
    ]);
    const operator = await startOperator(t, {
      namespaces: [namespace],
      leaderElection: false,
      args: [identity.chartKindsFlag],
      env: { NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1", KUBECONFIG: identity.kubeconfig },
    });
    const exited = exitOf(operator);
    exited.catch(() => {}); // the test stops it in the end
    /** `work`, unless the operator exits first. */
    const alive = <T>(work: Promise<T>) => Promise.race([work, exited]);

    // THEN an instance beside them is served
    await createInstance(client, namespace, "web", { image: "nginx:1.27" });
    await alive(waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec, 300_000));

    // and one of them says what the operator sees, in its own words, beside the other writer's conditions
    const s0 = await alive(waitForInstance(client, namespace, "s-0", "Ready", isReadyAtSpec, 300_000));
    const status = (s0 as WithStatus).status;
    const conditions = status?.conditions ?? [];
    const ready = conditions.find((c) => c.type === "Ready");
    assert.equal(ready?.reason, "Available");
    assert.equal(ready?.message, "1/1 replicas ready, running nginx:1.27");
    assert.equal(status?.message, "1/1 replicas ready, running nginx:1.27");
    assert.deepEqual(
      conditions.filter((c) => c.reason === "Theirs").map((c) => c.type),
      Array.from({ length: 12 }, (_, i) => `Junk${i}`),
    );
  },
);
