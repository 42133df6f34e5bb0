/**
 * The operator as a process against the local cluster: a new instance becomes Ready with its pods Ready (kwok),
 * scaling changes the Deployment and the reported counts, and an image upgrade shows Progressing before it is
 * Ready with the new status.image. status.endpoint names the Service's DNS name and port (and follows the port), and
 * `kubectl get -o wide` prints it with the message. The instance's Normal events say Created, then Ready. Each test
 * runs its own operator, scoped to its own namespace.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "../../kube/index.ts";
import { adminClient, testNamespace, type Typed, kubectl, waitFor } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  isReadyAtSpec,
  patchSpec,
  podsOf,
  recordInstance,
  startOperator,
  waitForInstance,
  type Instance,
} from "../support/operator.ts";

const client = adminClient();

type Deployment = Typed<{
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: { readyReplicas?: number };
}>;

test("a new instance becomes Ready with a Deployment, a Service and its pods Ready", async (t) => {
  const namespace = await testNamespace(t, client, "op-create");
  await startOperator(t, { namespaces: [namespace] });

  // WHEN an instance is created
  await createInstance(client, namespace, "web", { replicas: 2, image: "nginx:1.27", port: 9000 });

  // THEN it becomes Ready for its spec, with the counts and image of its running pods
  const ready = await waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec);
  assert.equal(ready.status?.phase, "Running");
  assert.equal(ready.status?.replicas, 2);
  assert.equal(conditionOf(ready, "Progressing")?.status, "False");
  assert.equal(conditionOf(ready, "Degraded")?.status, "False");
  // No finalizer: the garbage collector takes the Deployment and the Service with it (storage brings one)
  assert.ok(
    !ready.metadata.finalizers?.includes("myappinstance.finalizer.example.com"),
    "no finalizer without storage",
  );

  // and its children exist, controlled by the instance
  const deployment = await client.get<Deployment>("apps/v1", "Deployment", "web", namespace);
  const service = await client.get<Typed<{ spec?: { ports?: { port?: number }[] } }>>(
    "v1",
    "Service",
    "web",
    namespace,
  );
  for (const child of [deployment, service] as KubeObject[]) {
    const owner = child.metadata.ownerReferences?.find((reference) => reference.controller === true);
    assert.equal(owner?.uid, ready.metadata.uid, `${child.kind} is controlled by the instance`);
  }
  assert.equal(deployment.spec?.replicas, 2);
  assert.equal(deployment.spec?.template?.spec?.containers?.[0]?.image, "nginx:1.27");
  assert.equal(service.spec?.ports?.[0]?.port, 9000);

  // and the pods the status selector names are Ready (kwok marks them so)
  assert.ok(ready.status?.selector, "status.selector is set");
  const pods = await podsOf(client, namespace, ready.status.selector);
  assert.equal(pods.pods.length, 2);
  assert.equal(pods.ready, 2);

  // and status.endpoint says where it answers, which `kubectl get -o wide` prints beside the message
  assert.equal(ready.status?.endpoint, `web.${namespace}.svc:9000`);
  const wide = await kubectl("get", "myappinstances", "-n", namespace, "-o", "wide");
  const [header, row] = wide
    .trim()
    .split("\n")
    .map((line) => line.split(/\s{2,}/));
  assert.deepEqual(header?.slice(-2), ["ENDPOINT", "MESSAGE"]);
  assert.deepEqual(row?.slice(-2), [`web.${namespace}.svc:9000`, ready.status?.message]);
  const plain = await kubectl("get", "myappinstances", "-n", namespace);
  assert.ok(!plain.includes("ENDPOINT"), "only with -o wide");

  // and the instance's events tell its lifecycle as a kubebuilder operator's do: its children Created, once; its
  // first Ready is its condition's lastTransitionTime, not an event (a write per instance that says nothing new)
  const events = await waitFor("the Created event of the instance", async () => {
    const found = await normalEventsOf(namespace, ready.metadata.uid ?? "");
    return found.some((e) => e.reason === "Created") ? found : undefined;
  });
  assert.deepEqual(
    events.map((e) => `${e.reason}: ${e.note}`),
    ["Created: Created Service web and Deployment web"],
    "once, and no Ready event for a new instance",
  );
  const created = events.find((e) => e.reason === "Created");
  assert.equal(created?.reportingController, "example.com/myapp-operator");
  assert.equal(created?.related?.uid, deployment.metadata.uid, "Created relates to the Deployment");

  // WHEN the port changes THEN the endpoint follows it
  await patchSpec(client, namespace, "web", { port: 9001 });
  const moved = await waitForInstance(client, namespace, "web", "Ready on port 9001", isReadyAtSpec);
  assert.equal(moved.status?.endpoint, `web.${namespace}.svc:9001`);
});

type InstanceEvent = Typed<{
  type?: string;
  reason?: string;
  note?: string;
  eventTime?: string;
  reportingController?: string;
  regarding?: { uid?: string };
  related?: { uid?: string };
}>;

/** The Normal events.k8s.io/v1 Events about the object `uid`, oldest first. */
async function normalEventsOf(namespace: string, uid: string): Promise<InstanceEvent[]> {
  const { items } = await client.list<InstanceEvent>("events.k8s.io/v1", "Event", { namespace });
  return items
    .filter((event) => event.regarding?.uid === uid && event.type === "Normal")
    .sort((a, b) => Date.parse(a.eventTime ?? "") - Date.parse(b.eventTime ?? ""));
}

test("scaling an instance changes its Deployment and the reported replica counts", async (t) => {
  const namespace = await testNamespace(t, client, "op-scale");
  await startOperator(t, { namespaces: [namespace] });
  await createInstance(client, namespace, "web", { replicas: 1, image: "nginx:1.27" });
  await waitForInstance(client, namespace, "web", "Ready with 1 replica", isReadyAtSpec);

  // WHEN it is scaled up
  await patchSpec(client, namespace, "web", { replicas: 3 });
  // THEN it is Ready with 3 ready replicas, and 3 pods are Ready
  const up = await waitForInstance(client, namespace, "web", "Ready with 3 replicas", isReadyAtSpec);
  assert.equal(up.status?.readyReplicas, 3);
  assert.equal((await client.get<Deployment>("apps/v1", "Deployment", "web", namespace)).spec?.replicas, 3);
  assert.equal((await podsOf(client, namespace, up.status?.selector ?? "")).ready, 3);

  // WHEN it is scaled down to zero THEN it is Ready with none
  await patchSpec(client, namespace, "web", { replicas: 0 });
  const down = await waitForInstance(client, namespace, "web", "Ready with 0 replicas", isReadyAtSpec);
  assert.equal(down.status?.readyReplicas, 0);
  assert.equal((await client.get<Deployment>("apps/v1", "Deployment", "web", namespace)).spec?.replicas, 0);
});

test("an image upgrade goes Progressing, then Ready with the new status.image", async (t) => {
  const namespace = await testNamespace(t, client, "op-upgrade");
  await startOperator(t, { namespaces: [namespace] });
  await createInstance(client, namespace, "web", { replicas: 2, image: "nginx:1.27" });
  await waitForInstance(client, namespace, "web", "Ready on 1.27", isReadyAtSpec);

  // WHEN the image changes (every status write from now on is recorded)
  const recording = await recordInstance(client, namespace, "web", t);
  const patched = await patchSpec(client, namespace, "web", { image: "nginx:1.28" });
  const ready = await waitForInstance(client, namespace, "web", "Ready on 1.28", isReadyAtSpec);
  await recording.stop(ready);

  // THEN the first status for the new generation said Progressing and still named the old image
  const generation = patched.metadata.generation;
  const forNewSpec = recording.versions.filter((v: Instance) => v.status?.observedGeneration === generation);
  const first = forNewSpec[0];
  assert.ok(first, "a status for the new generation was written");
  assert.equal(conditionOf(first, "Progressing")?.status, "True", JSON.stringify(first.status));
  assert.equal(conditionOf(first, "Ready")?.status, "False");
  assert.equal(first.status?.image, "nginx:1.27", "status.image stays on the old image until the rollout is done");
  // and status.image moved only together with Ready
  for (const version of forNewSpec) {
    if (version.status?.image === "nginx:1.28") assert.equal(conditionOf(version, "Ready")?.status, "True");
  }
  // and in the end every pod runs the new image and is Ready
  assert.equal(ready.status?.image, "nginx:1.28");
  assert.equal(conditionOf(ready, "Progressing")?.status, "False");
  const pods = await podsOf(client, namespace, ready.status?.selector ?? "");
  assert.equal(pods.ready, 2);
  assert.deepEqual(
    pods.pods.map((pod) => pod.spec?.containers?.[0]?.image),
    ["nginx:1.28", "nginx:1.28"],
  );
});
