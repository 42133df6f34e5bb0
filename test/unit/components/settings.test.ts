import assert from "node:assert/strict";
import { defaultChartKinds } from "../../../api/index.ts";
import { describe, it } from "node:test";
import {
  defaultImage,
  defaultNamespace,
  defaultResources,
  describeIssues,
  resolveSettings,
} from "../../../components/settings.ts";

describe("resolveSettings", () => {
  it("applies the documented defaults", () => {
    // GIVEN no arguments WHEN resolved
    const result = resolveSettings("myapp-operator");
    // THEN every default is the documented one
    assert.deepEqual(result, {
      ok: true,
      settings: {
        name: "myapp-operator",
        namespace: defaultNamespace,
        createNamespace: true,
        image: defaultImage,
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
        defaultChart: undefined,
        deleteCrdOnDestroy: false,
      },
    });
  });

  it("turns leader election on at 2 replicas, not at 1", () => {
    const at = (replicas: number) => {
      const result = resolveSettings("op", { replicas });
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
      image: " ",
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

  it("rejects a name too long for the derived object names", () => {
    const result = resolveSettings("a".repeat(48));
    assert.equal(result.ok, false);
    assert.ok(resolveSettings("a".repeat(47)).ok);
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
