import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { autoName } from "../../../provider/auto-name.ts";
import { checkInputs, unwatchedNamespace } from "../../../provider/check.ts";
import { unknownValue } from "../../../provider/inputs.ts";

/** A property bag as the engine passes it. */
type Bag = Record<string, unknown>;

const owner = "organization/shop/dev";
/** What the resource class sends for `new MyAppInstance("web", { image: "nginx:1.27" })`. */
const minimal = { image: "nginx:1.27", owner, logicalName: "web" };
/** The checked inputs of `minimal`: every default applied. */
const minimalChecked = {
  name: autoName("web", owner),
  namespace: "default",
  replicas: 1,
  image: "nginx:1.27",
  port: 8080,
  storageReclaimPolicy: "Retain",
  timeoutSeconds: 600,
  owner,
  logicalName: "web",
  // Known before the object exists: a preview shows them instead of "unknown".
  serviceName: autoName("web", owner),
  endpoint: `${autoName("web", owner)}.default.svc:8080`,
};

describe("checkInputs: defaults", () => {
  test("a minimal instance gets every default, in a stable key order", () => {
    const { inputs, failures } = checkInputs({}, minimal);
    assert.deepEqual(failures, []);
    assert.deepEqual(inputs, minimalChecked);
    assert.deepEqual(Object.keys(inputs), Object.keys(minimalChecked));
  });

  test("checking the checked inputs again changes nothing (stable diffs)", () => {
    const once = checkInputs({}, minimal).inputs;
    assert.deepEqual(checkInputs(once, once), { inputs: once, failures: [] });
  });

  test("explicit values are kept", () => {
    const news = {
      ...minimal,
      name: "shop",
      namespace: "team-a",
      replicas: 3,
      port: 80,
      storage: "1Gi",
      storageClassName: "fast",
      storageReclaimPolicy: "Delete",
      kubeconfig: "apiVersion: v1",
      context: "kind",
      timeoutSeconds: 30,
    };
    const { inputs, failures } = checkInputs({}, news);
    assert.deepEqual(failures, []);
    assert.deepEqual(inputs, { ...news, serviceName: "shop", endpoint: "shop.team-a.svc:80" });
  });
});

describe("checkInputs: the name", () => {
  const cases: { name: string; olds: Bag; news: Bag; expected: string }[] = [
    { name: "an explicit name wins", olds: {}, news: { ...minimal, name: "shop" }, expected: "shop" },
    { name: "no name: the auto-name", olds: {}, news: minimal, expected: autoName("web", owner) },
    {
      name: "no name, but one in state: kept (the object never renames itself)",
      olds: { ...minimalChecked, name: "shop" },
      news: minimal,
      expected: "shop",
    },
    {
      name: "no name: the auto-name",
      olds: {},
      news: { ...minimal, name: undefined },
      expected: autoName("web", owner),
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(checkInputs(c.olds, c.news).inputs["name"], c.expected);
    });
  }

  test("the auto-name is a DNS label of at most 52 characters, different per stack", () => {
    const long = autoName("A_Very_Long_Resource_Name_That_Goes_On_And_On_And_On_Forever", owner);
    assert.match(long, /^[a-z][-a-z0-9]*[a-z0-9]$/);
    assert.ok(long.length <= 52, long);
    assert.match(autoName("web", owner), /^web-[0-9a-f]{8}$/);
    assert.notEqual(autoName("web", owner), autoName("web", "organization/shop/prod"));
    assert.match(autoName("9lives", owner), /^lives-[0-9a-f]{8}$/);
    assert.match(autoName("---", owner), /^myapp-[0-9a-f]{8}$/);
  });
});

describe("checkInputs: every failure at once, by input key", () => {
  /** An expected failure: the exact reason, or a pattern where the api's wording is long. */
  type Expected = { property: string; reason: string | RegExp };
  const cases: { name: string; news: Bag; expected: Expected[] }[] = [
    {
      name: "missing image",
      news: { owner, logicalName: "web" },
      expected: [{ property: "image", reason: /^is required: must be an OCI image reference/ }],
    },
    {
      name: "three bad fields, three failures",
      news: { ...minimal, image: "Not An Image", replicas: -1, port: 70000 },
      expected: [
        { property: "replicas", reason: "must be an integer from 0 to 2147483647" },
        { property: "image", reason: /^must be an OCI image reference/ },
        { property: "port", reason: "must be an integer from 1 to 65535" },
      ],
    },
    {
      name: "storageClassName without storage (a cross-field rule)",
      news: { ...minimal, storageClassName: "fast" },
      expected: [{ property: "storageClassName", reason: "needs spec.storage: without storage there is no volume" }],
    },
    {
      name: "a bad storage quantity and reclaim policy",
      news: { ...minimal, storage: "1 GB", storageReclaimPolicy: "Recycle" },
      expected: [
        { property: "storage", reason: /^must be a whole number of bytes from 1 to 1Ei/ },
        { property: "storageReclaimPolicy", reason: "must be one of Retain, Delete" },
      ],
    },
    {
      name: "a request above its limit is reported on the resources input",
      news: { ...minimal, resources: { requests: { memory: "2Gi" }, limits: { memory: "1Gi" } } },
      expected: [
        { property: "resources", reason: "requests.memory: must not be greater than the limit of the same resource" },
      ],
    },
    {
      name: "a value path through a prototype is refused on its chart input, naming the field",
      news: { ...minimal, chart: { configMap: "c", valuePaths: { imageTag: "__proto__.deletionTimestamp" } } },
      expected: [
        { property: "chart", reason: /^valuePaths\.imageTag: must be a dotted value path .*no segment __proto__/ },
      ],
    },
    {
      // JSON.parse makes `__proto__` an own key, as a program reading its values from a file would have it.
      name: "reserved keys in values are refused on the values input, each named by its path",
      news: {
        ...minimal,
        chart: { configMap: "c" },
        values: JSON.parse('{"a":[{"__proto__":{"x":1}}],"constructor":{}}'),
      },
      expected: [
        { property: "values", reason: /^a\[0\]\.__proto__: is a reserved name/ },
        { property: "values", reason: /^constructor: is a reserved name/ },
      ],
    },
    {
      name: "storage beyond the maximum, or a fraction of a byte (the api's bounds reach the provider)",
      news: { ...minimal, storage: "9999999999999999999Ei" },
      expected: [{ property: "storage", reason: /^must be a whole number of bytes from 1 to 1Ei/ }],
    },
    {
      name: "bad name and namespace",
      news: { ...minimal, name: "Web_1", namespace: "Team.A" },
      expected: [
        { property: "name", reason: /RFC 1123 subdomain/ },
        { property: "namespace", reason: /RFC 1123 label/ },
      ],
    },
    {
      name: "empty strings are values: each gets its field's error, none counts as absent",
      news: { ...minimal, name: "", namespace: "", storage: "", storageClassName: "", context: "" },
      expected: [
        { property: "name", reason: "must not be empty: leave it out for the auto-name" },
        { property: "namespace", reason: /^must not be empty/ },
        { property: "storage", reason: /^must be a whole number of bytes/ },
        { property: "storageClassName", reason: /^must be a StorageClass name/ },
        { property: "context", reason: /non-empty string/ },
      ],
    },
    {
      name: 'storage: "" (what config.get("storage") ?? "" gives) is an invalid storage, not "no storage"',
      news: { ...minimal, storage: "" },
      expected: [{ property: "storage", reason: /^must be a whole number of bytes/ }],
    },
    {
      name: "timeout out of range",
      news: { ...minimal, timeoutSeconds: 0 },
      expected: [{ property: "timeoutSeconds", reason: "must be a whole number of seconds from 1 to 86400" }],
    },
    {
      name: "a kubeconfig that is not text is reported without naming the property (its value would be printed)",
      news: { ...minimal, kubeconfig: 42 },
      expected: [{ property: "", reason: /^kubeconfig must be/ }],
    },
    {
      name: "not created through the resource class",
      news: { image: "nginx" },
      expected: [
        { property: "owner", reason: /resource class/ },
        { property: "logicalName", reason: /resource class/ },
        { property: "name", reason: "is required" },
      ],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { failures } = checkInputs({}, c.news);
      assert.equal(failures.length, c.expected.length, JSON.stringify(failures));
      c.expected.forEach((expected, i) => {
        const actual = failures[i]!;
        assert.equal(actual.property, expected.property);
        if (typeof expected.reason === "string") assert.equal(actual.reason, expected.reason);
        else assert.match(actual.reason, expected.reason);
      });
    });
  }
});

describe("checkInputs: unknown values during preview", () => {
  test("unknown values stay unknown and are not judged; known ones still get defaults", () => {
    const { inputs, failures } = checkInputs({}, { ...minimal, image: unknownValue, replicas: unknownValue });
    assert.deepEqual(failures, []);
    assert.equal(inputs["image"], unknownValue);
    assert.equal(inputs["replicas"], unknownValue);
    assert.equal(inputs["port"], 8080, "the default of a known-absent key");
    assert.equal(inputs["storageReclaimPolicy"], "Retain");
  });

  test("a number given as a string says so: preview shows {3} for both", () => {
    const { failures } = checkInputs({}, { ...minimal, replicas: "3", port: true });
    assert.deepEqual(failures, [
      { property: "replicas", reason: 'must be an integer from 0 to 2147483647, not the string "3"' },
      { property: "port", reason: "must be an integer from 1 to 65535, not a boolean" },
    ]);
  });

  test("a known bad field still fails next to an unknown one", () => {
    const { failures } = checkInputs({}, { ...minimal, image: unknownValue, port: 0 });
    assert.deepEqual(failures, [{ property: "port", reason: "must be an integer from 1 to 65535" }]);
  });

  test("a cross-field rule waits when one side is unknown", () => {
    // storage may turn out to be set: storageClassName alone is not an error yet
    const { failures } = checkInputs({}, { ...minimal, storage: unknownValue, storageClassName: "fast" });
    assert.deepEqual(failures, []);
  });

  test("an unknown name, namespace, kubeconfig or timeout passes through", () => {
    const news = {
      ...minimal,
      name: unknownValue,
      namespace: unknownValue,
      kubeconfig: unknownValue,
      timeoutSeconds: unknownValue,
    };
    const { inputs, failures } = checkInputs({}, news);
    assert.deepEqual(failures, []);
    for (const key of ["name", "namespace", "kubeconfig", "timeoutSeconds"])
      assert.equal(inputs[key], unknownValue, key);
  });

  test("a required field still missing is reported even when others are unknown", () => {
    const { failures } = checkInputs({}, { owner, logicalName: "web", replicas: unknownValue });
    assert.equal(failures.length, 1);
    assert.equal(failures[0]!.property, "image");
    assert.match(failures[0]!.reason, /^is required/);
  });

  test("an unknown inside an object input leaves that input unjudged, as an unknown input is", () => {
    // The engine marks a value of an object input at its own depth; it is not the value the program will give.
    for (const nested of [
      { resources: { limits: { memory: unknownValue } } },
      { chart: { oci: unknownValue, version: "1.0.0" } },
      { chart: { configMap: unknownValue } },
      { values: { a: [unknownValue] } },
    ]) {
      const { inputs, failures } = checkInputs({}, { ...minimal, ...nested });
      assert.deepEqual(failures, [], JSON.stringify(nested));
      const [key, value] = Object.entries(nested)[0]!;
      assert.deepEqual(inputs[key], value, key);
    }
  });

  test("a null inside an object input is dropped, as the apiserver would, when another input is unknown", () => {
    const resources = { requests: { cpu: "200m", memory: null } };
    const known = checkInputs({}, { ...minimal, resources });
    const partial = checkInputs({}, { ...minimal, image: unknownValue, resources });
    assert.deepEqual([known.failures, partial.failures], [[], []]);
  });
});

describe("checkInputs: storage transition rules against the state", () => {
  const withStorage = { ...minimalChecked, storage: "2Gi", storageClassName: "fast" };
  const cases: { name: string; olds: Bag; news: Bag; expected: string[] }[] = [
    {
      name: "grow: allowed",
      olds: withStorage,
      news: { ...minimal, storage: "3Gi", storageClassName: "fast" },
      expected: [],
    },
    {
      name: "same size, other notation: allowed",
      olds: withStorage,
      news: { ...minimal, storage: "2048Mi", storageClassName: "fast" },
      expected: [],
    },
    {
      name: "shrink: rejected",
      olds: withStorage,
      news: { ...minimal, storage: "1Gi", storageClassName: "fast" },
      expected: ["storage"],
    },
    {
      name: "class change: rejected",
      olds: withStorage,
      news: { ...minimal, storage: "2Gi", storageClassName: "slow" },
      expected: ["storageClassName"],
    },
    {
      name: "class dropped: rejected",
      olds: withStorage,
      news: { ...minimal, storage: "2Gi" },
      expected: ["storageClassName"],
    },
    {
      name: "removal: rejected, naming storage (and the class that goes with it)",
      olds: withStorage,
      news: minimal,
      expected: ["storage", "storageClassName"],
    },
    {
      name: "removal of storage without a class: rejected, naming storage",
      olds: { ...minimalChecked, storage: "2Gi" },
      news: minimal,
      expected: ["storage"],
    },
    {
      name: "added where there was none: allowed",
      olds: minimalChecked,
      news: { ...minimal, storage: "1Gi" },
      expected: [],
    },
    {
      name: "shrink under a new name: a new object, allowed",
      olds: withStorage,
      news: { ...minimal, name: "other", storage: "1Gi", storageClassName: "fast" },
      expected: [],
    },
    {
      name: "unknown storage: judged at up",
      olds: withStorage,
      news: { ...minimal, storage: unknownValue, storageClassName: "fast" },
      expected: [],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { failures } = checkInputs(c.olds, c.news);
      assert.deepEqual(
        failures.map((f) => f.property),
        c.expected,
        JSON.stringify(failures),
      );
      for (const failure of failures) assert.match(failure.reason, /new name/);
    });
  }

  test("the removal failure says how to drop the data on purpose", () => {
    const { failures } = checkInputs({ ...minimalChecked, storage: "2Gi" }, minimal);
    assert.match(failures[0]!.reason, /^may not be removed once set/);
    assert.match(failures[0]!.reason, /storageReclaimPolicy "Delete"/);
  });

  test("a class set where storage had none names the old value: unset, the cluster's default class", () => {
    const { failures } = checkInputs(
      { ...minimalChecked, storage: "2Gi" },
      { ...minimal, storage: "2Gi", storageClassName: "fast" },
    );
    assert.deepEqual(
      failures.map((f) => f.property),
      ["storageClassName"],
    );
    assert.match(
      failures[0]!.reason,
      /^may not change once spec\.storage is set: .*; was unset \(the volumes use the cluster's default class\), now fast\. /,
    );
  });

  test("the shrink failure says what it was and what it would be", () => {
    const { failures } = checkInputs(withStorage, { ...minimal, storage: "1Gi", storageClassName: "fast" });
    assert.match(failures[0]!.reason, /may grow but not shrink: was 2Gi, now 1Gi/);
  });
});

describe("unwatchedNamespace", () => {
  const platform = { platform: "shop-platform", watched: ["shop", "shop-jobs"] };

  test("refuses a namespace the platform's operator does not watch, naming the ones it does", () => {
    assert.deepEqual(unwatchedNamespace("default", platform), {
      property: "namespace",
      reason:
        `namespace "default" is not one shop-platform's operator watches (watchNamespaces: shop, shop-jobs): the ` +
        "instance would never become Ready; use one of those, or add it to the platform's watchNamespaces",
    });
  });

  test("admits a watched namespace, a platform watching every one, and no platform", () => {
    assert.equal(unwatchedNamespace("shop-jobs", platform), undefined);
    assert.equal(unwatchedNamespace("default", { platform: "p", watched: [] }), undefined);
    assert.equal(unwatchedNamespace("default", undefined), undefined);
  });
});
