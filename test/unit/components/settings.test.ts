import assert from "node:assert/strict";
import { defaultChartKinds } from "../../../api/index.ts";
import { describe, it } from "node:test";
import { defaultNamespace, defaultResources, describeIssues, resolveSettings } from "../../../components/settings.ts";

describe("resolveSettings", () => {
  it("applies the documented defaults", () => {
    // GIVEN only the image (no default: none is published) WHEN resolved
    const result = resolveSettings("myapp-operator", { image: "registry.example/myapp-operator:1.0.0" });
    // THEN every default is the documented one
    assert.deepEqual(result, {
      ok: true,
      settings: {
        name: "myapp-operator",
        namespace: defaultNamespace,
        createNamespace: true,
        image: "registry.example/myapp-operator:1.0.0",
        imagePullPolicy: "IfNotPresent",
        replicas: 1,
        leaderElection: false,
        watchNamespaces: [],
        resources: defaultResources,
        logLevel: "info",
        concurrency: 2,
        labels: {},
        annotations: {},
        operatorPlacement: "in-cluster",
        chartKinds: defaultChartKinds,
        chartServiceTypes: ["ClusterIP"],
        defaultChart: undefined,
        maxConcurrentRenders: 2,
        renderLimits: {
          memoryMiB: 256,
          cpuSeconds: 20,
          timeoutSeconds: 60,
          outputMiB: 16,
          objects: 500,
          valuesKiB: 128,
        },
        chartSources: [],
        chartSourcesCa: undefined,
        policy: undefined,
        webhooks: { enabled: true, url: undefined, defaults: "auto", certManager: undefined },
        deleteCrdOnDestroy: false,
      },
    });
  });

  it("turns leader election on at 2 replicas, not at 1", () => {
    const at = (replicas: number) => {
      const result = resolveSettings("op", { replicas, operatorPlacement: "external" });
      assert.ok(result.ok);
      return result.settings.leaderElection;
    };
    assert.equal(at(1), false);
    assert.equal(at(2), true);
    assert.equal(at(3), true);
  });

  it("reports every invalid argument at once, naming the field", () => {
    // GIVEN several bad arguments
    const result = resolveSettings("Bad_Name", {
      namespace: "-x",
      replicas: 1.5,
      concurrency: 0,
      logLevel: "loud" as never,
      watchNamespaces: ["team-a", "team-a", "UPPER"],
      labels: { "app.kubernetes.io/name": "mine", "ok-key": "bad value" },
      operatorPlacement: "somewhere" as never,
      image: "Not An Image",
    });
    // THEN each is named
    assert.equal(result.ok, false);
    const fields = result.ok ? [] : result.issues.map((issue) => issue.field);
    assert.deepEqual(fields.sort(), [
      "concurrency",
      "image",
      "labels.app.kubernetes.io/name",
      "labels.ok-key",
      "logLevel",
      "name",
      "namespace",
      "operatorPlacement",
      "replicas",
      "watchNamespaces[1]",
      "watchNamespaces[2]",
    ]);
  });

  it("refuses a misspelled argument by name, at the top and in nested objects, instead of taking its default", () => {
    const args = {
      image: "registry.example.com/op:1",
      operatorPlacment: "external",
      polcy: { maxReplicas: 2 },
      policy: { maxReplica: 3, namespaceBudget: { instance: 2 } },
      webhooks: { enable: false },
      renderLimits: { memoryMib: 300 },
    };
    const result = resolveSettings("p", args as never);
    assert.equal(result.ok, false);
    const issues = result.ok ? [] : result.issues;
    assert.deepEqual(issues.map((issue) => issue.field).sort(), [
      "operatorPlacment",
      "polcy",
      "policy.maxReplica",
      "policy.namespaceBudget.instance",
      "renderLimits.memoryMib",
      "webhooks.enable",
    ]);
    assert.match(issues[0]?.message ?? "", /^is not an argument; the arguments are namespace, .*operatorPlacement/);
    assert.match(
      issues.find((issue) => issue.field === "policy.maxReplica")?.message ?? "",
      /the arguments of policy are allowedRegistries, maxReplicas,/,
    );
  });

  it("reads label and annotation keys as the apiserver does: a prefix of at most 253 characters", () => {
    const prefix = (length: number) => `${"a".repeat(length - 4)}.com/key`;
    const result = resolveSettings("op", {
      operatorPlacement: "external",
      labels: { [prefix(253)]: "v", [prefix(254)]: "v" },
      annotations: { [prefix(254)]: "v", "Example.com/Key": "v" },
    });
    assert.ok(!result.ok);
    assert.deepEqual(
      result.issues.map((issue) => issue.field),
      [`labels.${prefix(254)}`, `annotations.${prefix(254)}`],
    );
    assert.match(result.issues[1]?.message ?? "", /at most 253 characters and '\/', then at most 63 alphanumerics/);
  });

  it("rejects a name too long for the derived object names", () => {
    const result = resolveSettings("a".repeat(48), { operatorPlacement: "external" });
    assert.equal(result.ok, false);
    assert.ok(resolveSettings("a".repeat(47), { operatorPlacement: "external" }).ok);
  });

  it("requires an image for an in-cluster operator, and says how to build and push one", () => {
    // GIVEN the default placement (in-cluster) and no image, or an empty one (a stack's unset config)
    for (const args of [{}, { image: "" }, { image: "  " }, { operatorPlacement: "in-cluster" as const }]) {
      // WHEN resolved
      const result = resolveSettings("op", args);
      // THEN exactly the image is named, with the command that builds and pushes one and the other way out
      assert.equal(result.ok, false, JSON.stringify(args));
      const issues = result.ok ? [] : result.issues;
      assert.deepEqual(
        issues.map((issue) => issue.field),
        ["image"],
      );
      assert.match(issues[0]!.message, /^is required for operatorPlacement "in-cluster"/);
      assert.match(issues[0]!.message, /npm run image -- --push REGISTRY\/NAME:TAG/);
      assert.match(issues[0]!.message, /operatorPlacement: "external"/);
    }
  });

  it("needs no image for an external operator, and keeps a given one trimmed", () => {
    const external = resolveSettings("op", { operatorPlacement: "external" });
    assert.ok(external.ok);
    assert.equal(external.settings.image, "");
    const given = resolveSettings("op", {
      image: " registry.example:5000/team/myapp-operator@sha256:" + "a".repeat(64),
    });
    assert.ok(given.ok);
    assert.equal(given.settings.image, "registry.example:5000/team/myapp-operator@sha256:" + "a".repeat(64));
  });

  it("rejects an image that is not an OCI reference, naming the field", () => {
    for (const image of ["registry.example/Myapp-Operator:1", "https://registry.example/op", "op:bad tag"]) {
      const result = resolveSettings("op", { image });
      assert.equal(result.ok, false, image);
      assert.deepEqual(result.ok ? [] : result.issues.map((issue) => issue.field), ["image"], image);
    }
  });

  it("formats issues one per line with the subject first", () => {
    const text = describeIssues('MyAppOperator "x"', [
      { field: "replicas", message: "must be a whole number" },
      { field: "namespace", message: "is not a namespace name" },
    ]);
    assert.equal(
      text,
      'MyAppOperator "x" has invalid arguments:\n  replicas: must be a whole number\n  namespace: is not a namespace name',
    );
  });
});
