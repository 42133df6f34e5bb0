/**
 * Every field of the api's spec schema is carried by the provider: from the resource's inputs through check to the
 * applied object's spec, and back from a live object on refresh. A spec field the provider does not know would be
 * dropped silently (the apiserver defaults it, the stack never sees it); the provider's keys come from the schema,
 * and this test proves it for each field.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { myAppInstanceSpecSchema, type MyAppInstanceSpecInput } from "../../../api/index.ts";
import { checkInputs } from "../../../provider/check.ts";
import { inputKeys, specKeys, type InstanceInputs, type SpecKey } from "../../../provider/inputs.ts";
import { desiredInstance, inputsFromLive, type LiveInstance } from "../../../provider/manifest.ts";

/**
 * A valid value, other than the default, for every field of the spec. Typed by the schema: a new field fails to
 * compile here until it has a sample (and then fails below until the provider carries it).
 */
const samples: { readonly [K in SpecKey]-?: Exclude<MyAppInstanceSpecInput[K], undefined> } = {
  replicas: 3,
  image: "registry.example.com/team/app:1.2",
  port: 9090,
  storage: "2Gi",
  storageClassName: "fast",
  storageReclaimPolicy: "Delete",
  chart: { configMap: "app-chart" },
  values: { ingress: { enabled: true } },
  resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "1Gi" } },
  podSecurityLevel: "Baseline",
};

const schemaKeys = Object.keys(myAppInstanceSpecSchema.shape);
const resource = { owner: "organization/shop/dev", logicalName: "web" };

describe("spec keys", () => {
  it("are the schema's fields, every one an input key", () => {
    assert.deepEqual([...specKeys].sort(), [...schemaKeys].sort());
    for (const key of schemaKeys) assert.ok((inputKeys as readonly string[]).includes(key), key);
    assert.deepEqual(Object.keys(samples).sort(), [...schemaKeys].sort(), "a sample for every spec field");
  });

  it("carries every spec field from the inputs through check to the applied object's spec", () => {
    // GIVEN a resource that sets every field of the spec
    const { inputs, failures } = checkInputs({}, { ...resource, ...samples });
    assert.deepEqual(failures, []);
    // WHEN check has run and the object is built
    const object = desiredInstance(inputs as unknown as InstanceInputs) as LiveInstance;
    // THEN each field reaches the spec, with its value
    for (const key of schemaKeys) {
      assert.deepEqual(object.spec?.[key as SpecKey], samples[key as SpecKey], `spec.${key} is carried`);
    }
  });

  it("reads every spec field the program sets back from a live object on refresh", () => {
    // GIVEN a resource that sets every field of the spec, each changed in the cluster since
    const program = { replicas: 1, image: "nginx:1.27", port: 80, storage: "1Gi", storageClassName: "slow" };
    const { inputs } = checkInputs({}, { ...resource, ...samples, ...program });
    const live: LiveInstance = {
      apiVersion: "example.com/v1",
      kind: "MyAppInstance",
      metadata: { name: "web-1", namespace: "default" },
      spec: samples,
    };
    const refreshed = inputsFromLive(inputs as unknown as InstanceInputs, live);
    for (const key of schemaKeys) {
      assert.deepEqual(refreshed[key as SpecKey], samples[key as SpecKey], `${key} is read back`);
    }
  });
});
