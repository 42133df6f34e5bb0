/**
 * Two operator processes, one leader: built by the runtime's Manager alone (informer, controller, leader election,
 * health server, graceful shutdown) around a toy reconcile that copies a ConfigMap's data.input to data.output. After the
 * leader is killed with SIGKILL, the standby takes over within the lease duration and keeps reconciling; SIGTERM
 * makes a leader finish, release the lease and exit 0.
 *
 * The same file is the child process: with RUNTIME_IT_CHILD set it runs one operator instead of the tests.
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`). Works in a throwaway namespace.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import type { KubeClient, KubeObject } from "../../kube/index.ts";
import { onTerminationSignal, startManager } from "../../operator/runtime/index.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";

const labelSelector = "runtime-test=leader";
const handledBy = "runtime-test/handled-by";
type ConfigMap = KubeObject & { data?: Record<string, string> };

if (process.env.RUNTIME_IT_CHILD) {
  await runOperator(
    process.env.RUNTIME_IT_CHILD,
    process.env.RUNTIME_IT_NAMESPACE ?? "",
    process.env.RUNTIME_IT_LEASE ?? "",
  );
} else {
  test("two operators elect one leader; the standby takes over after SIGKILL and keeps reconciling", async (t) => {
    const client = adminClient();
    const namespace = await testNamespace(t, client, "rt-leader");
    const lease = "runtime-it";
    const a = startOperator("op-a", namespace, lease);
    const b = startOperator("op-b", namespace, lease);
    t.after(() => {
      for (const op of [a, b]) if (op.child.exitCode === null && op.child.signalCode === null) op.child.kill("SIGKILL");
    });

    // THEN exactly one leads, and both are ready (a standby serves warm caches)
    const holder = async () =>
      (
        await client.find<KubeObject & { spec?: { holderIdentity?: string } }>(
          "coordination.k8s.io/v1",
          "Lease",
          lease,
          namespace,
        )
      )?.spec?.holderIdentity;
    const first = await waitFor("a leader", async () => {
      const leaders = [a, b].filter((op) => op.logged("became leader"));
      return leaders.length > 0 ? leaders : undefined;
    });
    assert.equal(first.length, 1, "exactly one process became leader");
    const leader = first[0]!;
    const standby = leader === a ? b : a;
    assert.equal(await holder(), leader.identity);
    for (const op of [leader, standby]) {
      // Two free ports (port 0 for each): the probes and /metrics on servers of their own.
      const probePort = await waitFor(
        `${op.identity} probe port`,
        async () => op.line("serving /healthz, /readyz")?.port,
      );
      const metricsPort = await waitFor(`${op.identity} metrics port`, async () => op.line("serving /metrics")?.port);
      const readyz = await waitFor(`${op.identity} ready`, async () => {
        const response = await fetch(`http://127.0.0.1:${String(probePort)}/readyz`);
        return response.status === 200 ? response : undefined;
      });
      assert.equal(readyz.status, 200);
      const metrics = await (await fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`)).text();
      assert.match(metrics, new RegExp(`leader_election_master_status\\{name="${lease}"\\} ${op === leader ? 1 : 0}`));
    }

    // WHEN a change arrives THEN the leader reconciles it
    await client.create<ConfigMap>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "item", namespace, labels: { "runtime-test": "leader" } },
      data: { input: "1" },
    });
    await waitFor("output 1 by the leader", async () => reconciledBy(client, namespace, "1", leader.identity));
    // one JSON log line per reconcile; the one that copied the input wrote once (its stdout may lag the write)
    const reconciles = () => leader.lines.filter((l) => l.msg === "reconciled" && l.key === `${namespace}/item`);
    await waitFor("the log line of the copying reconcile", async () =>
      reconciles().some((l) => l.writes === 1) ? true : undefined,
    );
    assert.ok(reconciles().every((l) => typeof l.durationMs === "number" && l.result === "success"));
    assert.equal(standby.logged("reconciled"), false, "the standby reconciles nothing");

    // WHEN the leader is killed without a chance to release the lease
    const killedAt = performance.now();
    leader.child.kill("SIGKILL");
    // THEN the standby takes over once the lease expired: 15 s after it saw the last renewal, which it polls for
    // every 2-4.4 s (jittered retry period). How soon is proven on a fake clock (test/unit/runtime/leader-election
    // .test.ts); here it takes over at all (the deadline only ends a wait for a takeover that never comes; the figure
    // is in the diagnostics)
    await waitFor("the standby leads", async () => ((await holder()) === standby.identity ? true : undefined), {
      timeoutMs: 180_000,
    });
    t.diagnostic(`takeover ${Math.round(performance.now() - killedAt)} ms after SIGKILL`);
    // and keeps reconciling
    await client.mergePatch("v1", "ConfigMap", "item", namespace, { data: { input: "2" } });
    await waitFor("output 2 by the new leader", async () => reconciledBy(client, namespace, "2", standby.identity));

    // WHEN the new leader gets SIGTERM THEN it drains, releases the lease and exits 0
    standby.child.kill("SIGTERM");
    const exit = await standby.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(standby.logged("released the lease"));
    assert.equal(await holder(), "", "the lease is free for the next leader at once");
  });
}

async function reconciledBy(client: KubeClient, namespace: string, value: string, identity: string) {
  const cm = await client.get<ConfigMap>("v1", "ConfigMap", "item", namespace);
  return cm.data?.output === value && cm.metadata.annotations?.[handledBy] === identity ? cm : undefined;
}

interface Operator {
  readonly identity: string;
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  logged(msg: string): boolean;
  line(msg: string): Record<string, unknown> | undefined;
}

function startOperator(identity: string, namespace: string, lease: string): Operator {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
    env: { ...process.env, RUNTIME_IT_CHILD: identity, RUNTIME_IT_NAMESPACE: namespace, RUNTIME_IT_LEASE: lease },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout! }).on("line", (text) => {
    try {
      lines.push(JSON.parse(text) as Record<string, unknown>);
    } catch {
      lines.push({ msg: text });
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  return {
    identity,
    child,
    lines,
    exited,
    logged: (msg) => lines.some((l) => l.msg === msg),
    line: (msg) => lines.find((l) => l.msg === msg),
  };
}

/** One operator process: the runtime's Manager, as operator/main.ts uses it, around a toy reconcile. */
async function runOperator(identity: string, namespace: string, leaseName: string): Promise<void> {
  const logger = pino({ base: { identity } });
  const manager = await startManager(
    {
      name: "configmap-copier",
      logger,
      identity,
      kubeconfig: { path: process.env.KUBECONFIG ?? "" },
      for: { apiVersion: "v1", kind: "ConfigMap", labelSelector },
      // ConfigMaps have no generation: every update counts.
      updateFilter: () => true,
      namespaces: [namespace],
      leaderElection: { namespace, id: leaseName, fieldManager: "runtime-it" },
      probeAddress: { host: "127.0.0.1", port: 0 },
      metricsAddress: { host: "127.0.0.1", port: 0 },
      reportingController: "example.com/runtime-it",
      fieldManager: "runtime-it",
      drainTimeoutMs: 5_000,
    },
    ({ client, cache }) => ({
      reconcile: async ({ name }, { writes }) => {
        const cm = cache.get<ConfigMap>("v1", "ConfigMap", name, namespace);
        if (!cm) return {};
        const input = cm.data?.input ?? "";
        if (cm.data?.output === input && cm.metadata.annotations?.[handledBy] === identity) return {};
        // A reconciler counts the writes it asks for; the runtime logs the count on the reconcile's line.
        writes.count += 1;
        await client.mergePatch("v1", "ConfigMap", name, namespace, {
          metadata: { annotations: { [handledBy]: identity } },
          data: { output: input },
        });
        return {};
      },
    }),
  );
  onTerminationSignal(async () => {
    await manager.stop();
    process.exit(0);
  });
}
