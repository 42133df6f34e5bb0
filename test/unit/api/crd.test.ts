import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { parse } from "yaml";
import type { StructuralSchema } from "../../../api/structural.ts";
import {
  buildCrd,
  chartRules,
  isPlainLocation,
  crdName,
  crdYaml,
  imageReferencePattern,
  maxServiceEndpointLength,
  openApiV3Schema,
  valuePathFields,
  wholeBytesQuantityPattern,
} from "../../../api/index.ts";
import { crdPath } from "../../../api/crd-path.ts";

type Crd = {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: StructuralSchema };
      subresources: { status: object; scale: Record<string, string> };
      additionalPrinterColumns: { name: string; type: string; jsonPath: string; priority?: number }[];
    }[];
  };
};

const crd = buildCrd() as unknown as Crd;
const [v1] = crd.spec.versions;
const root = openApiV3Schema();
const spec = root.properties?.["spec"];
const property = (name: string) => spec?.properties?.[name] ?? assert.fail(`no spec.${name}`);

/** Every schema node with its path, depth first. */
function nodes(schema: StructuralSchema, path = ""): [string, StructuralSchema][] {
  const children = Object.entries(schema.properties ?? {}).flatMap(([name, child]) => nodes(child, `${path}.${name}`));
  const items = schema.items ? nodes(schema.items, `${path}[]`) : [];
  return [[path || ".", schema], ...children, ...items];
}

describe("the committed CRD", () => {
  test("equals a fresh generation (run `npm run manifests` after changing api/)", () => {
    assert.equal(readFileSync(crdPath, "utf8"), crdYaml());
  });

  test("is the YAML of buildCrd()", () => {
    assert.deepEqual(parse(crdYaml()), buildCrd());
  });
});

describe("buildCrd", () => {
  test("names the resource myappinstances.example.com, kind MyAppInstance, plus a short name and a category", () => {
    assert.equal(crd.metadata.name, crdName);
    assert.equal(crd.spec.group, "example.com");
    assert.equal(crd.spec.scope, "Namespaced");
    assert.deepEqual(crd.spec.names, {
      kind: "MyAppInstance",
      listKind: "MyAppInstanceList",
      plural: "myappinstances",
      singular: "myappinstance",
      shortNames: ["myapp"],
      categories: ["myapp-platform"],
    });
    assert.equal(crd.spec.versions.length, 1);
    assert.deepEqual([v1?.name, v1?.served, v1?.storage], ["v1", true, true]);
  });

  test("has the status and scale subresources, pointing at fields that exist", () => {
    assert.deepEqual(v1?.subresources, {
      status: {},
      scale: {
        specReplicasPath: ".spec.replicas",
        statusReplicasPath: ".status.replicas",
        labelSelectorPath: ".status.selector",
      },
    });
    const status = root.properties?.["status"]?.properties ?? {};
    assert.equal(property("replicas").type, "integer");
    assert.equal(status["replicas"]?.type, "integer");
    assert.equal(status["selector"]?.type, "string");
    // The endpoint the operator reports (and -o wide prints): a bounded string.
    assert.deepEqual([status["endpoint"]?.type, status["endpoint"]?.maxLength], ["string", maxServiceEndpointLength]);
  });

  test("prints Image, Desired, Ready, Phase and Age; -o wide adds Endpoint and Message", () => {
    assert.deepEqual(
      v1?.additionalPrinterColumns.map((column) => [column.name, column.jsonPath, column.priority ?? 0]),
      [
        ["Image", ".spec.image", 0],
        ["Desired", ".spec.replicas", 0],
        ["Ready", ".status.readyReplicas", 0],
        ["Phase", ".status.phase", 0],
        ["Age", ".metadata.creationTimestamp", 0],
        ["Endpoint", ".status.endpoint", 1],
        ["Message", ".status.message", 1],
      ],
    );
  });
});

describe("openApiV3Schema is a structural schema", () => {
  test("every node has a type, and no node has additionalProperties: false", () => {
    for (const [path, node] of nodes(root)) {
      assert.ok(node.type, `${path} has no type`);
      assert.notEqual(node.additionalProperties, false, `${path} has additionalProperties: false`);
    }
  });

  test("metadata is only typed, as the apiserver requires", () => {
    assert.deepEqual(root.properties?.["metadata"], { type: "object" });
  });

  test("every spec and status field has a description for kubectl explain", () => {
    for (const [path, node] of nodes(root)) {
      if (path.startsWith(".spec") || path.startsWith(".status"))
        assert.ok(node.description, `${path} has no description`);
    }
  });

  test("requires spec and spec.image, and carries the defaults", () => {
    assert.deepEqual(root.required, ["spec"]);
    assert.deepEqual(spec?.required, ["image"]);
    assert.equal(property("replicas").default, 1);
    assert.equal(property("port").default, 8080);
    assert.equal(property("storageReclaimPolicy").default, "Retain");
  });

  test("has real bounds: int32 replicas, TCP ports, capped strings", () => {
    assert.deepEqual([property("replicas").minimum, property("replicas").maximum], [0, 2147483647]);
    assert.deepEqual([property("port").minimum, property("port").maximum], [1, 65535]);
    for (const name of ["image", "storage", "storageClassName"]) assert.ok(property(name).maxLength, name);
  });

  test("checks the very patterns zod uses, with a CEL rule that says what is allowed instead of printing them", () => {
    for (const [field, pattern] of [
      ["image", imageReferencePattern],
      ["storage", wholeBytesQuantityPattern],
    ] as const) {
      assert.equal(property(field).pattern, undefined, `${field}: no OpenAPI pattern, whose error prints the regex`);
      const [first] = property(field)["x-kubernetes-validations"] as { rule: string; message: string }[];
      const literal = /^self\.matches\('(.*)'\)$/.exec(first?.rule ?? "")?.[1] ?? assert.fail(first?.rule);
      assert.equal(literal.replaceAll("\\\\", "\\"), pattern, `${field}: the pattern, as a CEL string`);
      assert.match(first?.message ?? "", new RegExp(`^spec\\.${field} must be `));
    }
  });

  test("carries the CEL rules, each message naming its field", () => {
    const rules = nodes(root).flatMap(([path, node]) =>
      (
        (node["x-kubernetes-validations"] as {
          rule: string;
          message?: string;
          messageExpression?: string;
          fieldPath?: string;
        }[]) ?? []
      ).map((rule) => ({ path, ...rule })),
    );
    assert.deepEqual(
      rules.map((rule) => [rule.path, rule.fieldPath ?? ""]),
      [
        [".spec", ".storageClassName"],
        [".spec", ".storage"],
        [".spec", ".storageClassName"],
        [".spec", ".chart.valuePaths.imageDigest"],
        [".spec.image", ""],
        [".spec.image", ""],
        [".spec.storage", ""],
        [".spec.storage", ""],
        [".spec.storage", ""],
        [".spec.storageClassName", ""],
        [".spec.chart", ""],
        [".spec.chart", ".version"],
        [".spec.chart", ".name"],
        [".spec.chart", ".name"],
        [".spec.chart.configMap", ""],
        [".spec.chart.oci", ""],
        [".spec.chart.oci", ""],
        [".spec.chart.repo", ""],
        [".spec.chart.name", ""],
        [".spec.chart.version", ""],
        ...valuePathFields.map((field) => [`.spec.chart.valuePaths.${field}`, ""]),
        [".spec.resources", ".requests.cpu"],
        [".spec.resources", ".requests.memory"],
        [".spec.resources.requests.cpu", ""],
        [".spec.resources.requests.memory", ""],
        [".spec.resources.limits.cpu", ""],
        [".spec.resources.limits.memory", ""],
      ],
    );
    for (const rule of rules)
      assert.match(
        rule.message ?? rule.messageExpression ?? "",
        /spec\.(storage|storageClassName|image|chart|resources)/,
      );
    assert.ok(rules.some((rule) => rule.rule.includes("quantity(self).compareTo(quantity('1Ei')) <= 0")));
    assert.ok(rules.some((rule) => rule.rule.includes("oldSelf.storage") && rule.rule.includes("has(self.storage)")));
    assert.ok(rules.some((rule) => rule.rule.includes("quantity(self).compareTo(quantity(oldSelf)) >= 0")));
  });

  test("refuses reserved value path segments with an RE2 rule, since a pattern cannot say it without lookahead", () => {
    // GIVEN the CEL rule of one value path (every path has the same one)
    const imageTag = property("chart").properties?.["valuePaths"]?.properties?.["imageTag"];
    const [rule] = (imageTag?.["x-kubernetes-validations"] as { rule: string; message: string }[] | undefined) ?? [];
    assert.ok(rule, "spec.chart.valuePaths.imageTag has a CEL rule");
    // THEN its regular expression (CEL's matches is an unanchored RE2 search, as JS's test is) refuses exactly
    // the paths with a __proto__, constructor or prototype segment, and its message names the field
    const expression = /^!self\.matches\('(.*)'\)$/.exec(rule.rule)?.[1] ?? assert.fail(rule.rule);
    assert.doesNotMatch(expression, /\(\?[=!<]/, "no lookaround: RE2 has none");
    const refused = (path: string) => new RegExp(expression).test(path);
    for (const path of ["__proto__", "__proto__.deletionTimestamp", "a.constructor.prototype", "x.prototype"]) {
      assert.ok(refused(path), path);
    }
    for (const path of ["", "image.tag", "__proto", "protos.constructors", "a.__proto__x", "prototype_"]) {
      assert.equal(refused(path), false, path);
    }
    assert.match(rule.message, /^spec\.chart\.valuePaths\.imageTag .*__proto__, constructor or prototype/);
  });

  test("keys conditions by type, as metav1.Condition lists are", () => {
    const conditions = root.properties?.["status"]?.properties?.["conditions"];
    assert.equal(conditions?.["x-kubernetes-list-type"], "map");
    assert.deepEqual(conditions?.["x-kubernetes-list-map-keys"], ["type"]);
    assert.ok(conditions?.items?.required?.includes("type"));
  });
});

describe("chart locations", () => {
  const chart = property("chart");
  const plain = {
    oci: ["oci://ghcr.io/org/app", "oci://127.0.0.1:5000/charts/app", "oci://ghcr.io/org/a..b/.app/..x"],
    repo: ["https://charts.example.com", "https://charts.example.com/stable/", "http://10.0.0.5:8080/charts"],
  };
  // Each would be fetched at another path than the one an allow-list compares, or carries what a location must not.
  const hostile = {
    oci: [
      "oci://ghcr.io/org/team-a/../team-b/app",
      "oci://ghcr.io/org/./app",
      "oci://ghcr.io/org/%2e%2e/app",
      "oci://ghcr.io/org/a\\..\\b",
      "oci://user@ghcr.io/org/app",
      "oci://ghcr.io/org/app?x=1",
      "oci://ghcr.io/org/app#x",
    ],
    repo: ["https://charts.example.com/a/../b/", "https://charts.example.com/..", "https://charts.example.com/x?y"],
  };

  for (const name of ["oci", "repo"] as const) {
    test(`spec.chart.${name}: a CEL rule refuses dot segments, escapes and credentials, naming the field`, () => {
      const rules =
        (chart.properties?.[name]?.["x-kubernetes-validations"] as { rule: string; message?: string }[] | undefined) ??
        assert.fail(`no rules on ${name}`);
      assert.deepEqual(
        rules.map((rule) => rule.message),
        [
          `spec.chart.${name} ${chartRules.plainLocation}`,
          ...(name === "oci" ? [`spec.chart.oci ${chartRules.ociUntagged}`] : []),
        ],
      );
      // The rule's expression is the one isPlainLocation runs (RE2 and JS read it alike; the api-corpus
      // integration test holds the apiserver to the same verdicts).
      assert.match(rules[0]?.rule ?? "", /^!self\.matches\('.+'\) && !self\.contains\('\\\\'\)$/);
      for (const location of plain[name]) assert.ok(isPlainLocation(location), location);
      for (const location of hostile[name]) assert.ok(!isPlainLocation(location), location);
    });
  }
});
