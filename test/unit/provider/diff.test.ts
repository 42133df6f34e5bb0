import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { diffInputs, ForbiddenChangeError, unchangedObject, unchangedSpec } from "../../../provider/diff.ts";
import { unknownValue } from "../../../provider/inputs.ts";

/** A property bag as the engine passes it. */
type Bag = Record<string, unknown>;

/** Checked inputs as stored in state. */
const inputs = {
  name: "web-1a2b3c4d",
  namespace: "default",
  replicas: 2,
  image: "nginx:1.27",
  port: 8080,
  storageReclaimPolicy: "Retain",
  timeoutSeconds: 600,
  owner: "organization/shop/dev",
  logicalName: "web",
};

/** Old outputs: the inputs plus everything the cluster and the operator added. */
const outputs = {
  ...inputs,
  uid: "0b7c5f2e-1111-2222-3333-444455556666",
  generation: 3,
  status: { phase: "Running", readyReplicas: 2, observedGeneration: 3, conditions: [] },
  serviceName: "web-1a2b3c4d",
  endpoint: "web-1a2b3c4d.default.svc:8080",
  __provider: "exports.handler = ...",
};

const withStorage = { ...inputs, storage: "2Gi", storageClassName: "fast" };

describe("diffInputs", () => {
  const cases: {
    name: string;
    olds: Bag;
    news: Bag;
    changed: string[];
    replaces: string[];
  }[] = [
    {
      name: "nothing the user owns changed: no diff, whatever the cluster added",
      olds: outputs,
      news: inputs,
      changed: [],
      replaces: [],
    },
    {
      name: "an image change is an in-place update of exactly that key",
      olds: outputs,
      news: { ...inputs, image: "nginx:1.28" },
      changed: ["image"],
      replaces: [],
    },
    {
      name: "replicas, port and reclaim policy: in place",
      olds: outputs,
      news: { ...inputs, replicas: 5, port: 80, storageReclaimPolicy: "Delete" },
      changed: ["replicas", "port", "storageReclaimPolicy"],
      replaces: [],
    },
    {
      name: "a rename is a replacement; the new name cannot collide, so create first",
      olds: outputs,
      news: { ...inputs, name: "shop" },
      changed: ["name"],
      replaces: ["name"],
    },
    {
      name: "a namespace move is a replacement, create first",
      olds: outputs,
      news: { ...inputs, namespace: "prod" },
      changed: ["namespace"],
      replaces: ["namespace"],
    },
    {
      name: "removing storage while renaming: a new object, so a replacement, create first",
      olds: { ...outputs, storage: "2Gi" },
      news: { ...inputs, name: "shop" },
      changed: ["name", "storage"],
      replaces: ["name"],
    },
    {
      name: "growing storage: in place",
      olds: { ...outputs, ...withStorage },
      news: { ...withStorage, storage: "5Gi" },
      changed: ["storage"],
      replaces: [],
    },
    {
      name: "adding storage: in place",
      olds: outputs,
      news: { ...inputs, storage: "1Gi" },
      changed: ["storage"],
      replaces: [],
    },
    {
      name: "a new timeout: an update of the state alone, so destroy waits as long as the program now says",
      olds: outputs,
      news: { ...inputs, timeoutSeconds: 60 },
      changed: ["timeoutSeconds"],
      replaces: [],
    },
    {
      name: "new credentials or context: an update of the state alone, so refresh and destroy use them",
      olds: { ...outputs, kubeconfig: "apiVersion: v1 # old token", context: "dev" },
      news: { ...inputs, kubeconfig: "apiVersion: v1 # rotated", context: "prod" },
      changed: ["kubeconfig", "context"],
      replaces: [],
    },
    {
      name: "an unknown connection (a provider's context in a preview) is no news",
      olds: { ...outputs, kubeconfig: "apiVersion: v1", context: "dev" },
      news: { ...inputs, kubeconfig: unknownValue, context: unknownValue },
      changed: [],
      replaces: [],
    },
    {
      name: "a renamed stack re-marks the object in place",
      olds: outputs,
      news: { ...inputs, owner: "organization/shop/staging" },
      changed: ["owner"],
      replaces: [],
    },
    {
      name: "unknown image: an update",
      olds: outputs,
      news: { ...inputs, image: unknownValue },
      changed: ["image"],
      replaces: [],
    },
    {
      name: "unknown name: maybe a new one, so a replacement",
      olds: outputs,
      news: { ...inputs, name: unknownValue },
      changed: ["name"],
      replaces: ["name"],
    },
    {
      name: "unknown storage where storage is set: an update, judged by check at up (never a replacement)",
      olds: { ...outputs, ...withStorage },
      news: { ...withStorage, storage: unknownValue },
      changed: ["storage"],
      replaces: [],
    },
    {
      name: "unknown storage where there was none: an update",
      olds: outputs,
      news: { ...inputs, storage: unknownValue },
      changed: ["storage"],
      replaces: [],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const result = diffInputs(c.olds, c.news);
      assert.deepEqual(result.changed, c.changed);
      assert.deepEqual(result.replaces, c.replaces);
      assert.equal(result.changes, c.changed.length > 0);
    });
  }
});

describe("diffInputs: transitions the apiserver would reject fail the preview", () => {
  const cases: { name: string; news: Bag; message: RegExp }[] = [
    {
      name: "storage shrink",
      news: { ...withStorage, storage: "1Gi" },
      message: /spec\.storage may grow but not shrink: was 2Gi, now 1Gi/,
    },
    {
      name: "class change",
      news: { ...withStorage, storageClassName: "slow" },
      message: /spec\.storageClassName may not change once spec\.storage is set: .*; was fast, now slow\./,
    },
    {
      name: "class dropped",
      news: { ...inputs, storage: "2Gi" },
      message: /spec\.storageClassName may not change .*; was fast, now unset \(the cluster's default class\)\./,
    },
    { name: "storage removed", news: inputs, message: /spec\.storage may not be removed once set/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.throws(
        () => diffInputs({ ...outputs, ...withStorage }, c.news),
        (error: unknown) =>
          error instanceof ForbiddenChangeError && c.message.test(error.message) && /new name/.test(error.message),
      );
    });
  }

  test("the same change under a new name is a replacement, not an error", () => {
    const result = diffInputs({ ...outputs, ...withStorage }, { ...withStorage, name: "shop", storage: "1Gi" });
    assert.deepEqual(result.replaces, ["name"]);
  });

  test("a replacement of a Delete instance that the same change sets to Retain is refused: its volumes would go", () => {
    // GIVEN an instance with storage stored with storageReclaimPolicy Delete
    const olds = { ...outputs, ...withStorage, storageReclaimPolicy: "Delete" };
    // WHEN the program renames it and says Retain THEN refused, saying to apply the policy first
    assert.throws(
      () => diffInputs(olds, { ...withStorage, name: "shop", storageReclaimPolicy: "Retain" }),
      (error: unknown) =>
        error instanceof ForbiddenChangeError && /storageReclaimPolicy.*says Delete.*first/.test(error.message),
    );
    // AND one that keeps Delete (dropping the data on purpose) is a replacement
    assert.deepEqual(diffInputs(olds, { ...withStorage, name: "shop", storageReclaimPolicy: "Delete" }).replaces, [
      "name",
    ]);
    // AND a chart instance's volumes are its StatefulSets': refused the same way
    const stateless = { ...outputs, storageReclaimPolicy: "Delete" };
    const chart = { configMap: "app-chart" };
    assert.throws(
      () => diffInputs({ ...stateless, chart }, { ...inputs, chart, name: "shop" }),
      (error: unknown) => error instanceof ForbiddenChangeError,
    );
    // AND so is one with neither storage nor a chart: the platform's default chart may have given it volumes,
    // which its inputs do not show
    assert.throws(
      () => diffInputs(stateless, { ...inputs, name: "shop" }),
      (error: unknown) => error instanceof ForbiddenChangeError && /default chart/.test(error.message),
    );
    assert.deepEqual(diffInputs(stateless, { ...inputs, name: "shop", storageReclaimPolicy: "Delete" }).replaces, [
      "name",
    ]);
  });

  test("an unknown class is judged at up, not guessed at", () => {
    const result = diffInputs({ ...outputs, ...withStorage }, { ...withStorage, storageClassName: unknownValue });
    assert.deepEqual(result.replaces, []);
    assert.deepEqual(result.changed, ["storageClassName"]);
  });
});

describe("diffInputs: resources, the one object-valued input", () => {
  const resources = { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "1Gi" } };

  test("the same resources in another key order are no change", () => {
    const reordered = { limits: { memory: "1Gi" }, requests: { memory: "256Mi", cpu: "250m" } };
    const outcome = diffInputs({ ...outputs, resources }, { ...inputs, resources: reordered });
    assert.deepEqual([outcome.changes, outcome.changed], [false, []]);
  });

  test("changed resources and podSecurityLevel are updates in place, not replacements", () => {
    const outcome = diffInputs(
      { ...outputs, resources },
      { ...inputs, resources: { ...resources, limits: { memory: "2Gi" } }, podSecurityLevel: "Baseline" },
    );
    assert.deepEqual(outcome.changed, ["resources", "podSecurityLevel"]);
    assert.deepEqual(outcome.replaces, []);
  });
});

describe("unchangedSpec: a no-op preview asks the cluster nothing, whatever the inputs' shapes", () => {
  const objectInputs = {
    ...inputs,
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "512Mi" } },
    chart: { configMap: "web-chart", valuePaths: { port: "service.httpPort" } },
    values: { redis: { enabled: true }, hosts: ["a", "b"] },
  };
  test("the same object inputs as new objects (key order of their own) are unchanged", () => {
    const fromState = JSON.parse(JSON.stringify(objectInputs)) as Bag;
    const fromCheck = {
      ...objectInputs,
      resources: { limits: { memory: "512Mi" }, requests: { memory: "128Mi", cpu: "100m" } },
      values: { hosts: ["a", "b"], redis: { enabled: true } },
    };
    assert.equal(unchangedSpec(fromState, fromCheck), true);
  });
  test("a change deep inside an object input is a change, and so is an array's order", () => {
    assert.equal(
      unchangedSpec(objectInputs, { ...objectInputs, values: { redis: { enabled: false }, hosts: ["a", "b"] } }),
      false,
    );
    assert.equal(
      unchangedSpec(objectInputs, { ...objectInputs, values: { redis: { enabled: true }, hosts: ["b", "a"] } }),
      false,
    );
  });
  test("a new kubeconfig or timeout is no change of the instance", () => {
    assert.equal(unchangedSpec(objectInputs, { ...objectInputs, kubeconfig: "new", timeoutSeconds: 60 }), true);
    assert.equal(unchangedObject(objectInputs, { ...objectInputs, kubeconfig: "new", timeoutSeconds: 60 }), true);
  });
});

describe("unchangedObject: an update writes nothing only when the object would hold the same", () => {
  test("a renamed stack or resource changes the object's ownership annotations, though not its spec", () => {
    // GIVEN a resource's state and the same spec under another stack (or resource) name
    for (const renamed of [{ owner: "organization/shop/prod" }, { logicalName: "frontend" }]) {
      const news = { ...inputs, ...renamed };
      // THEN the spec is the same (a preview needs no dry-run), the object is not (update must apply its markers)
      assert.equal(unchangedSpec(outputs, news), true);
      assert.equal(unchangedObject(outputs, news), false);
      // AND diff reports it
      assert.deepEqual(diffInputs(outputs, news).changed, Object.keys(renamed));
    }
  });
});
