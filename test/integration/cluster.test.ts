/** The local cluster is real: scheduling and readiness, RBAC, garbage collection and storage all work. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { KubeClient, ForbiddenError, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { serviceAccountKubeconfig } from "../../components/index.ts";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import { defaultResources } from "../../api/index.ts";
import { podRoom } from "../../bench/support/fleet-capacity.ts";

const client = adminClient();
const podTemplate = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
});

test("a Deployment with 2 replicas becomes ready through controller-manager, scheduler and kwok", async (t) => {
  const namespace = await testNamespace(t, client);
  await client.create({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: { replicas: 2, selector: { matchLabels: { app: "web" } }, template: podTemplate("web") },
  });
  const ready = await waitFor("deployment web readyReplicas=2", async () => {
    const d = await client.get<Typed<{ status?: { readyReplicas?: number } }>>(
      "apps/v1",
      "Deployment",
      "web",
      namespace,
    );
    return d.status?.readyReplicas === 2 ? d : undefined;
  });
  assert.equal(ready.status?.readyReplicas, 2);
  const pods = await client.list<Typed<{ spec: { nodeName?: string }; status?: { phase?: string } }>>("v1", "Pod", {
    namespace,
  });
  assert.equal(pods.items.length, 2);
  for (const pod of pods.items) {
    assert.match(pod.spec.nodeName ?? "", /^node-/, "scheduled onto a kwok node");
    assert.equal(pod.status?.phase, "Running");
  }
});

test("the nodes hold a fleet: 10,200 pods of the default requests fit by slots, cpu and memory", async () => {
  const nodes = await client.list<Typed<{ status?: { allocatable?: Record<string, string> } }>>("v1", "Node");
  const room = nodes.items.reduce((sum, node) => sum + podRoom(node), 0);
  assert.ok(
    room >= 10_200,
    `room for ${room} pods of ${defaultResources.requests.cpu} cpu and ${defaultResources.requests.memory}`,
  );
});

test("RBAC is enforced: a ServiceAccount without a RoleBinding is denied (403)", async (t) => {
  const namespace = await testNamespace(t, client);
  await client.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "nobody", namespace } });
  const asNobody = new KubeClient(
    loadKubeConfig({ kubeconfig: await serviceAccountKubeconfig(client, namespace, "nobody") }),
  );
  await assert.rejects(asNobody.list("v1", "Pod", { namespace }), ForbiddenError);
  // The same request as admin succeeds, so the 403 is RBAC's verdict and not a broken request.
  await client.list("v1", "Pod", { namespace });
});

test("ownerReference garbage collection deletes a child after its owner", async (t) => {
  const namespace = await testNamespace(t, client);
  const owner = await client.create<KubeObject>({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "owner", namespace },
  });
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "child",
      namespace,
      ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid! }],
    },
  });
  await client.delete("v1", "ConfigMap", "owner", namespace);
  await waitFor("child ConfigMap to be garbage-collected", async () =>
    (await client.find("v1", "ConfigMap", "child", namespace)) ? undefined : true,
  );
});

test("a StatefulSet with volume claim templates gets bound claims and Ready pods", async (t) => {
  const namespace = await testNamespace(t, client);
  await client.create({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "db", namespace },
    spec: {
      replicas: 2,
      serviceName: "db",
      selector: { matchLabels: { app: "db" } },
      template: podTemplate("db"),
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
        },
      ],
    },
  });
  await waitFor("statefulset db readyReplicas=2", async () => {
    const s = await client.get<Typed<{ status?: { readyReplicas?: number } }>>(
      "apps/v1",
      "StatefulSet",
      "db",
      namespace,
    );
    return s.status?.readyReplicas === 2 ? true : undefined;
  });
  const claims = await client.list<Typed<{ spec: { storageClassName?: string }; status?: { phase?: string } }>>(
    "v1",
    "PersistentVolumeClaim",
    { namespace },
  );
  assert.deepEqual(claims.items.map((c) => [c.metadata.name, c.status?.phase, c.spec.storageClassName]).sort(), [
    ["data-db-0", "Bound", "local"],
    ["data-db-1", "Bound", "local"],
  ]);
});
