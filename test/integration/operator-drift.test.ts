/**
 * Drift repair by the operator process on the local cluster: a deleted Service comes back, and a Deployment edited
 * behind the operator's back is put back to the spec. Both are driven by the children's watch events, not by the
 * periodic resync (which stays at its 10-minute default here).
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import {
  createInstance,
  isReadyAtSpec,
  podsOf,
  reconcileChanged,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";

const client = adminClient();

type Service = Typed<{ spec?: { ports?: { port?: number }[]; selector?: Record<string, string> } }>;
type Deployment = Typed<{
  spec?: { replicas?: number; template?: { spec?: { containers?: { name: string; image?: string }[] } } };
}>;

test("a deleted Service is re-created", async (t) => {
  const namespace = await testNamespace(t, client, "op-drift-svc");
  const operator = await startOperator(t, { namespaces: [namespace] });
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27", port: 9000 });
  await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  const original = await client.get<Service>("v1", "Service", "web", namespace);

  // WHEN someone deletes the Service
  assert.equal(await client.delete("v1", "Service", "web", namespace), true);

  // THEN the operator creates it again, as the spec says
  const recreated = await waitFor(
    "a new Service web",
    async () => {
      const service = await client.find<Service>("v1", "Service", "web", namespace);
      return service && service.metadata.uid !== original.metadata.uid && !service.metadata.deletionTimestamp
        ? service
        : undefined;
    },
    { timeoutMs: 60_000 },
  );
  assert.equal(recreated.spec?.ports?.[0]?.port, 9000);
  assert.deepEqual(recreated.spec?.selector, original.spec?.selector);
  const instance = await waitForInstance(client, namespace, "web", "Ready after the repair", isReadyAtSpec);
  assert.equal(
    recreated.metadata.ownerReferences?.find((reference) => reference.controller === true)?.uid,
    instance.metadata.uid,
  );
  // and its log says it created the Service twice: at first, and after the deletion
  const creations = () => operator.logs.filter((line) => reconcileChanged(line, "Service/web created"));
  await waitFor("a second reconcile that created the Service", async () =>
    creations().length === 2 ? true : undefined,
  );
});

test("an edited Deployment is put back to the spec", async (t) => {
  const namespace = await testNamespace(t, client, "op-drift-deploy");
  await startOperator(t, { namespaces: [namespace] });
  await createInstance(client, namespace, "web", { replicas: 2, image: "nginx:1.27" });
  await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  const before = await client.get<Deployment>("apps/v1", "Deployment", "web", namespace);

  // WHEN someone edits the Deployment's replicas and image (a different field manager, like kubectl edit)
  const edited = await client.jsonPatch<Deployment>("apps/v1", "Deployment", "web", namespace, [
    { op: "replace", path: "/spec/replicas", value: 1 },
    { op: "replace", path: "/spec/template/spec/containers/0/image", value: "nginx:tampered" },
  ]);
  assert.equal(edited.spec?.replicas, 1, "the edit went through");

  // THEN the operator restores both, in the same object (not a re-created one)
  const restored = await waitFor(
    "the Deployment back at 2 replicas of nginx:1.27",
    async () => {
      const deployment = await client.get<Deployment>("apps/v1", "Deployment", "web", namespace);
      const spec = deployment.spec;
      return spec?.replicas === 2 && spec.template?.spec?.containers?.[0]?.image === "nginx:1.27"
        ? deployment
        : undefined;
    },
    { timeoutMs: 60_000 },
  );
  assert.equal(restored.metadata.uid, before.metadata.uid);
  assert.ok(Number(restored.metadata.generation) > Number(edited.metadata.generation), "a new generation");
  // and the instance ends Ready on its own image with every pod running it
  // (the status may never have left Ready: the repair can beat the Deployment controller to the edit)
  const instance = await waitForInstance(client, namespace, "web", "Ready after the repair", isReadyAtSpec);
  assert.equal(instance.status?.image, "nginx:1.27");
  await waitFor("2 ready pods on nginx:1.27 only", async () => {
    const pods = await podsOf(client, namespace, instance.status?.selector ?? "");
    const images = pods.pods.map((pod) => pod.spec?.containers?.[0]?.image);
    return pods.ready === 2 && images.length === 2 && images.every((image) => image === "nginx:1.27")
      ? true
      : undefined;
  });
});
