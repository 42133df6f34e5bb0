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
        tenantRoles: true,
      },
    });
  });

  it("turns leader election on at 2 replicas, not at 1", () => {
    const at = (replicas: number) => {
      const result = resolveSettings("op", { replicas, image: "registry.example/op:1" });
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

  it("refuses an argument of the wrong type by name, as a program without a type check passes it", () => {
    // GIVEN what JavaScript and stack configuration hand over: strings for booleans and numbers, a string for a list
    const result = resolveSettings("op", {
      image: "registry.example.com/op:1",
      deleteCrdOnDestroy: "false",
      createNamespace: "false",
      concurrency: "4",
      watchNamespaces: "shop",
      chartSources: ["oci://r.example/c/", 7],
      labels: { team: 3 },
      policy: { allowedRegistries: "docker.io", requireExpandableStorage: "yes" },
      webhooks: { enabled: "false", certManager: { issuer: "ca", knd: "Issuer" } },
      renderLimits: { memoryMiB: "512" },
    } as never);
    // THEN each is named with what it is and what it must be; nothing of it was read as something else
    assert.ok(!result.ok);
    const messages = Object.fromEntries(result.issues.map((issue) => [issue.field, issue.message]));
    assert.deepEqual(messages, {
      deleteCrdOnDestroy: 'is a string ("false"); it must be true or false',
      createNamespace: 'is a string ("false"); it must be true or false',
      concurrency: 'is a string ("4"); it must be a number',
      watchNamespaces: 'is a string ("shop"); it must be a list of strings',
      "chartSources[1]": "is a number (7); it must be a string",
      "labels.team": "is a number (3); it must be a string",
      "policy.allowedRegistries": 'is a string ("docker.io"); it must be a list of strings',
      "policy.requireExpandableStorage": 'is a string ("yes"); it must be true or false',
      "webhooks.enabled": 'is a string ("false"); it must be true or false',
      "webhooks.certManager.knd": "is not an argument; the arguments of webhooks.certManager are issuer, kind",
      "renderLimits.memoryMiB": 'is a string ("512"); it must be a number',
    });
  });

  it("takes an undefined argument, nested ones too, as not given", () => {
    const result = resolveSettings("op", {
      operatorPlacement: "external",
      renderLimits: { memoryMiB: undefined, objects: 300 },
      policy: undefined,
    });
    assert.ok(result.ok, JSON.stringify(!result.ok && result.issues));
    assert.equal(result.settings.renderLimits.memoryMiB, 256);
    assert.equal(result.settings.renderLimits.objects, 300);
  });

  it("refuses what it would otherwise drop: pods' settings for an external operator, a URL of webhooks turned off", () => {
    const result = resolveSettings("op", {
      operatorPlacement: "external",
      image: "registry.example.com/op:1",
      imagePullPolicy: "Always",
      replicas: 3,
      resources: { limits: { memory: "1Gi" } },
      webhooks: { enabled: false, url: "https://127.0.0.1:9443" },
    });
    assert.ok(!result.ok);
    assert.deepEqual(result.issues.map((issue) => issue.field).sort(), [
      "image",
      "imagePullPolicy",
      "replicas",
      "resources",
      "webhooks.url",
    ]);
    assert.match(result.issues[0]?.message ?? "", /operatorPlacement "external" does not have/);
    // An empty image counts as not given (a stack's `config.get(...) ?? ""`).
    assert.ok(resolveSettings("op", { operatorPlacement: "external", image: "" }).ok);
  });

  it("checks the pull policy, the container's resources and an empty chartKinds before anything is applied", () => {
    const result = resolveSettings("op", {
      image: "registry.example.com/op:1",
      imagePullPolicy: "always" as never,
      resources: { limit: {}, requests: { memory: "lots", cpu: "2", gpu: "1" }, limits: { cpu: "1" } } as never,
      chartKinds: [],
    });
    assert.ok(!result.ok);
    const messages = Object.fromEntries(result.issues.map((issue) => [issue.field, issue.message]));
    assert.match(messages["imagePullPolicy"] ?? "", /"always" must be one of Always, IfNotPresent, Never/);
    assert.match(
      messages["resources.limit"] ?? "",
      /is not an argument; the arguments of resources are requests, limits/,
    );
    assert.match(messages["resources.requests.memory"] ?? "", /"lots" must be a positive quantity string/);
    assert.match(messages["resources.requests.gpu"] ?? "", /use cpu, memory, ephemeral-storage/);
    assert.match(messages["resources.requests.cpu"] ?? "", /must not exceed resources.limits.cpu/);
    assert.match(messages["chartKinds"] ?? "", /lists no kind; leave it out for the built-in template's kinds/);
  });

  it("refuses a webhook URL with credentials or a fragment, which it would otherwise strip", () => {
    for (const url of ["https://user:pw@127.0.0.1:9443", "https://:pw@127.0.0.1:9443", "https://127.0.0.1:9443/#x"]) {
      const result = resolveSettings("op", { operatorPlacement: "external", webhooks: { url } });
      assert.ok(!result.ok, url);
      assert.equal(result.issues[0]?.field, "webhooks.url");
    }
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
