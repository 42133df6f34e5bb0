/**
 * The kept-claims guard (components/kept-claims-guard.ts) through the real pulumi engine, on the local cluster: a
 * stack declares a Namespace with the guard and an instance with storage in it (the README's data-safety recipe
 * for a namespace kept in the instances' stack). Then the program drops both:
 * - `pulumi preview` warns, naming the namespace and the claim, and changes nothing;
 * - `pulumi up` deletes the instance (its claim kept: storageReclaimPolicy Retain) and refuses to delete the
 *   namespace, with the same message: the namespace and the very same claim are still there;
 * - `pulumi destroy` without `--run-program` stops, asking for it, losing nothing;
 * - once the claim is deleted on purpose, `pulumi destroy --run-program` deletes the namespace.
 *
 * Needs the toolchain, the local cluster and operator/main.ts: `npm test -- test/e2e/kept-claims-guard.test.ts`.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import { localDir, repoRoot } from "../../tools/lib/paths.ts";
import { adminClient, waitFor, type Typed } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { log, projectStack } from "./support/project.ts";

const client = adminClient();
const minutes = (n: number) => n * 60_000;

/** A Namespace with the guard and, in it, `db` with storage; `declared=false` drops both from the program. */
function program(): string {
  return `import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterProvider, MyAppInstance, keptClaimsGuard } from ${JSON.stringify(path.join(repoRoot, "index.ts"))};

const config = new pulumi.Config();
const cluster = new ClusterProvider("cluster", { kubeconfig: config.require("kubeconfig") });
// Declared whatever the program holds: a delete finds its hook by name among the program's.
const guard = keptClaimsGuard("data-kept-claims", cluster);
if (config.getBoolean("declared") ?? true) {
  const data = new k8s.core.v1.Namespace(
    "data",
    { metadata: { name: config.require("namespace") } },
    { provider: cluster, hooks: { beforeDelete: [guard] } },
  );
  new MyAppInstance("db", {
    namespace: data.metadata.name,
    image: "postgres:17",
    port: 5432,
    storage: "1Gi",
  });
}
`;
}

describe("the kept-claims guard on a Namespace of the instances' stack", { timeout: minutes(15) }, () => {
  it("warns in preview, refuses the delete in up and destroy, and lets the namespace go once no claim is kept", async (t) => {
    const suffix = randomBytes(3).toString("hex");
    const namespace = `e2e-guard-${suffix}`;
    const workDir = path.join(localDir, "e2e", `guard-${suffix}`);
    mkdirSync(workDir, { recursive: true });
    writeFileSync(
      path.join(workDir, "Pulumi.yaml"),
      "name: guard-e2e\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.ts\n",
    );
    writeFileSync(path.join(workDir, "index.ts"), program());
    const operator = await startOperator(t, {
      namespaces: [namespace],
      leaderElection: false,
      label: "guard operator",
    });
    const stack = await projectStack(workDir);
    // In the order that strands nothing: the stack's state, the claims and the namespace, the directory.
    t.after(async () => {
      await stack.workspace.removeStack(stack.name, { force: true }).catch(() => undefined);
      await client.delete("v1", "Namespace", namespace).catch(() => undefined);
      rmSync(workDir, { recursive: true, force: true });
    });
    await stack.setAllConfig({
      kubeconfig: { value: process.env.KUBECONFIG ?? "" },
      namespace: { value: namespace },
    });
    const failWith = (error: unknown) => new Error(`${String(error)}\noperator log (tail):\n${operator.logTail()}`);

    await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
      throw failWith(error);
    });
    const claims = await client.list<Typed<object>>("v1", "PersistentVolumeClaim", { namespace });
    assert.equal(claims.items.length, 1, "db has one claim");
    const claim = claims.items[0]!;
    const claimName = claim.metadata.name ?? "";

    await stack.setConfig("declared", { value: "false" });

    await t.test("preview: a warning names the namespace and the claim; nothing changes", async () => {
      const preview = await stack.preview({ onOutput: log(t) });
      assert.equal(preview.changeSummary.delete, 2, JSON.stringify(preview.changeSummary));
      const flat = preview.stdout.replace(/\s+/g, " ");
      assert.match(flat, new RegExp(`Deleting namespace ${namespace} would delete its data`));
      assert.match(flat, new RegExp(`${claimName} \\(1Gi, instance db-[0-9a-f]{8}\\)`));
      assert.match(flat, /retainOnDelete: true/);
      assert.equal((await client.list("v1", "PersistentVolumeClaim", { namespace })).items.length, 1);
    });

    await t.test("up: the instance goes, the delete of the namespace is refused, the claim stays", async () => {
      const refused = await stack.up({ onOutput: log(t) }).then(
        () => undefined,
        (error: unknown) => String(error),
      );
      assert.ok(refused, "up fails");
      assert.match(refused.replace(/\s+/g, " "), new RegExp(`Refusing to delete namespace ${namespace}: it holds 1`));
      const instances = await client.list(apiVersion, kind, { namespace });
      assert.deepEqual(instances.items, [], "the instance was deleted");
      const live = await client.get<Typed<{ status?: { phase?: string } }>>("v1", "Namespace", namespace);
      assert.equal(live.status?.phase, "Active");
      const after = await client.list<Typed<object>>("v1", "PersistentVolumeClaim", { namespace });
      assert.deepEqual(
        after.items.map((item) => item.metadata.uid),
        [claim.metadata.uid],
        "the very same claim is still there",
      );
    });

    await t.test("destroy without --run-program stops and asks for it, losing nothing", async () => {
      const stopped = await stack.destroy({ onOutput: log(t) }).then(
        () => undefined,
        (error: unknown) => String(error),
      );
      assert.ok(stopped, "destroy fails");
      assert.match(stopped, /You must run with the `--run-program` flag to use delete hooks during destroy/);
      assert.equal((await client.list("v1", "PersistentVolumeClaim", { namespace })).items.length, 1);
    });

    await t.test("with the claim deleted on purpose, destroy --run-program deletes the namespace", async () => {
      await client.delete("v1", "PersistentVolumeClaim", claimName, namespace);
      await waitFor(
        "the claim to be gone",
        async () =>
          (await client.list("v1", "PersistentVolumeClaim", { namespace })).items.length === 0 ? true : undefined,
        { timeoutMs: minutes(2) },
      );
      const destroy = await stack.destroy({ runProgram: true, onOutput: log(t) });
      assert.equal(destroy.summary.result, "succeeded");
      const gone = await client.get<Typed<{ status?: { phase?: string } }>>("v1", "Namespace", namespace).then(
        (live) => live.status?.phase ?? "Active",
        () => "gone",
      );
      assert.ok(gone === "gone" || gone === "Terminating", `the namespace is deleted (${gone})`);
    });
  });
});
