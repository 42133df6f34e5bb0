import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { InstanceInputs } from "../../../provider/inputs.ts";
import {
  desiredInstance,
  inputsFromLive,
  outputsFor,
  ownershipProblem,
  type LiveInstance,
} from "../../../provider/manifest.ts";
import { diffInputs } from "../../../provider/diff.ts";

const inputs: InstanceInputs = {
  name: "web-1a2b3c4d",
  namespace: "shop",
  replicas: 3,
  image: "nginx:1.27",
  port: 8080,
  storage: "1Gi",
  storageReclaimPolicy: "Retain",
  kubeconfig: "apiVersion: v1\nkind: Config\n",
  context: "local",
  timeoutSeconds: 600,
  owner: "organization/shop/dev",
  logicalName: "web",
};

const marks = {
  "myapp.example.com/pulumi-stack": "organization/shop/dev",
  "myapp.example.com/pulumi-resource": "web",
};

function live(spec: LiveInstance["spec"], annotations: Record<string, string> = marks, uid = "u-1"): LiveInstance {
  return {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: { name: "web-1a2b3c4d", namespace: "shop", uid, generation: 7, resourceVersion: "99", annotations },
    spec,
    status: { phase: "Running", readyReplicas: 3, observedGeneration: 7 },
  };
}

describe("desiredInstance", () => {
  test("exactly the fields the provider owns: spec and the ownership marker, no credentials", () => {
    assert.deepEqual(desiredInstance(inputs), {
      apiVersion: "example.com/v1",
      kind: "MyAppInstance",
      metadata: { name: "web-1a2b3c4d", namespace: "shop", annotations: marks },
      spec: { replicas: 3, image: "nginx:1.27", port: 8080, storage: "1Gi", storageReclaimPolicy: "Retain" },
    });
  });

  test("with a reconcile request, the request annotation beside the ownership marker", () => {
    const metadata = desiredInstance(inputs, "2030-01-01T00:00:00.000Z").metadata;
    assert.deepEqual(metadata.annotations, {
      ...marks,
      "myapp.example.com/reconcile-requested-at": "2030-01-01T00:00:00.000Z",
    });
  });

  test("with an incarnation, the token the state entry keeps: it may delete only the object that has it", () => {
    const metadata = desiredInstance(inputs, undefined, "7f1c").metadata;
    assert.deepEqual(metadata.annotations, { ...marks, "myapp.example.com/pulumi-incarnation": "7f1c" });
  });
});

describe("outputsFor", () => {
  test("inputs plus cluster, uid, generation, status, Service name and in-cluster endpoint", () => {
    const cluster = { server: "https://127.0.0.1:6443", uid: "ks-1" };
    const outputs = outputsFor(inputs, live({}), cluster);
    assert.deepEqual(outputs.cluster, cluster);
    assert.equal(outputs.uid, "u-1");
    assert.equal(outputs.generation, 7);
    assert.deepEqual(outputs.status, { phase: "Running", readyReplicas: 3, observedGeneration: 7 });
    assert.equal(outputs.serviceName, "web-1a2b3c4d");
    assert.equal(outputs.endpoint, "web-1a2b3c4d.shop.svc:8080");
    assert.equal(outputs.image, "nginx:1.27");
    assert.equal("incarnation" in outputs, false, "an object written before incarnations has none");
    const later = live({}, { ...marks, "myapp.example.com/pulumi-incarnation": "7f1c" });
    assert.equal(outputsFor(inputs, later, cluster).incarnation, "7f1c");
  });
});

describe("inputsFromLive", () => {
  test("a change made with kubectl shows up; credentials and ownership stay", () => {
    const refreshed = inputsFromLive(
      inputs,
      live({ replicas: 5, image: "nginx:1.29", port: 8080, storage: "2Gi", storageReclaimPolicy: "Delete" }),
    );
    assert.deepEqual(refreshed, {
      ...inputs,
      replicas: 5,
      image: "nginx:1.29",
      storage: "2Gi",
      storageReclaimPolicy: "Delete",
    });
  });

  test("a field removed in the cluster is removed from the inputs", () => {
    const refreshed = inputsFromLive(inputs, live({ replicas: 3, image: "nginx:1.27", port: 8080 }));
    assert.equal("storage" in refreshed, false);
  });

  test("a field the program leaves out (admission's podSecurityLevel) stays out: no diff a refresh cannot settle", () => {
    const spec = {
      ...{ replicas: 3, image: "nginx:1.27", port: 8080, storage: "1Gi", storageReclaimPolicy: "Retain" as const },
      podSecurityLevel: "Baseline" as const,
    };
    const refreshed = inputsFromLive(inputs, live(spec));
    assert.equal("podSecurityLevel" in refreshed, false);
    // AND the state the refresh writes shows no change against the program's inputs at the next preview
    const state: Record<string, unknown> = { ...outputsFor(refreshed, live(spec), undefined) };
    assert.deepEqual(diffInputs(state, { ...inputs }).changed, []);
  });
});

describe("ownershipProblem", () => {
  test("this stack's and this resource's marker: ours", () => {
    assert.equal(ownershipProblem(live({}), inputs), undefined);
  });

  test("the object this resource created (same uid) stays ours while its marker changes", () => {
    assert.equal(ownershipProblem(live({}, {}, "u-1"), inputs, "u-1"), undefined);
  });

  const foreign: { name: string; annotations: Record<string, string>; says: RegExp }[] = [
    { name: "no marker", annotations: {}, says: /has no myapp\.example\.com\/pulumi-stack annotation/ },
    {
      name: "another stack",
      annotations: { ...marks, "myapp.example.com/pulumi-stack": "organization/shop/prod" },
      says: /is "organization\/shop\/prod"/,
    },
    {
      name: "another resource of this stack",
      annotations: { ...marks, "myapp.example.com/pulumi-resource": "api" },
      says: /pulumi-resource is "api"/,
    },
  ];
  for (const c of foreign) {
    test(`${c.name}: not ours, and the error says what to do`, () => {
      const problem = ownershipProblem(live({}, c.annotations, "u-2"), inputs, "u-1");
      assert.match(problem ?? "", /^MyAppInstance shop\/web-1a2b3c4d exists and is not managed by this stack/);
      assert.match(problem ?? "", c.says);
      assert.match(problem ?? "", /kubectl -n shop annotate myappinstance web-1a2b3c4d/);
    });
  }
});
