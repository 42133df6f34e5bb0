import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import type { MyAppInstanceSpec, MyAppInstanceSpecInput } from "../../../api/index.ts";
import { myAppInstanceSpecSchema, validateSpec } from "../../../api/index.ts";
import { maxSpecFields } from "../../../api/validate.ts";

function issuesOf(input: unknown): { path: string; message: string }[] {
  const verdict = validateSpec(input);
  assert.equal(verdict.ok, false, "expected the spec to be rejected");
  return verdict.ok ? [] : verdict.issues;
}

describe("validateSpec", () => {
  test("applies the defaults", () => {
    // GIVEN only the required field WHEN validated THEN the defaults are filled in
    const verdict = validateSpec({ image: "nginx" });
    assert.deepEqual(verdict, {
      ok: true,
      spec: { image: "nginx", replicas: 1, port: 8080, storageReclaimPolicy: "Retain" },
    });
  });

  test("refuses a spec of hundreds of thousands of fields as one issue, not one per unknown key", () => {
    // Unknown keys in the spec and in a nested object: the apiserver drops them; a forged review need not
    const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 1]));
    for (const input of [
      { image: "nginx", ...keys(200_000) },
      { image: "nginx", resources: { requests: keys(200_000) } },
    ]) {
      assert.deepEqual(issuesOf(input), [
        {
          path: "spec",
          message:
            `has more than ${maxSpecFields} fields outside spec.values, where a MyAppInstance spec has a few ` +
            "dozen (unknown fields are rejected, not dropped)",
        },
      ]);
    }
    // A typo is still named on its own, and large values are the values' business (their own size limit)
    assert.deepEqual(
      issuesOf({ image: "nginx", replica: 2 }).map((issue) => issue.path),
      ["spec.replica"],
    );
    assert.equal(validateSpec({ image: "nginx", values: keys(maxSpecFields * 10) }).ok, true);
  });

  test("keeps what the user set", () => {
    const input: MyAppInstanceSpecInput = {
      image: "registry.example.com/team/app:1.2.3",
      replicas: 3,
      port: 9090,
      storage: "10Gi",
      storageClassName: "fast-ssd",
      storageReclaimPolicy: "Delete",
    };
    const expected: MyAppInstanceSpec = { ...input, replicas: 3, port: 9090, storageReclaimPolicy: "Delete" };
    assert.deepEqual(validateSpec(input), { ok: true, spec: expected });
  });

  test("reports every failure at once, each naming its field and what it allows", () => {
    const issues = issuesOf({ image: "NGINX", replicas: -1, port: 70000, storage: "1GB", extra: true });
    assert.deepEqual(
      issues.map((issue) => issue.path),
      ["spec.replicas", "spec.image", "spec.port", "spec.storage", "spec.extra"],
    );
    assert.match(issues[0]?.message ?? "", /integer from 0 to 2147483647/);
    assert.match(issues[2]?.message ?? "", /integer from 1 to 65535/);
    assert.match(issues[4]?.message ?? "", /not a known field/);
  });

  test("says that a missing field is required", () => {
    assert.deepEqual(
      issuesOf({}).map((issue) => [issue.path, issue.message.slice(0, 12)]),
      [["spec.image", "is required:"]],
    );
  });

  test("reads null as 'not set', as the apiserver does", () => {
    assert.deepEqual(validateSpec({ image: "nginx", replicas: null, port: null }), {
      ok: true,
      spec: { image: "nginx", replicas: 1, port: 8080, storageReclaimPolicy: "Retain" },
    });
    assert.deepEqual(
      issuesOf({ image: null }).map((issue) => issue.path),
      ["spec.image"],
    );
    // An unknown field stays unknown even when null: the apiserver reports it.
    assert.deepEqual(
      issuesOf({ image: "nginx", size: null }).map((issue) => issue.path),
      ["spec.size"],
    );
  });

  test("rejects fractions, strings and booleans where integers belong", () => {
    for (const replicas of [1.5, "3", true, 2147483648]) {
      assert.deepEqual(
        issuesOf({ image: "nginx", replicas }).map((issue) => issue.path),
        ["spec.replicas"],
      );
    }
  });

  test("storage is a whole number of bytes from 1 to 1Ei, without a fraction", () => {
    const invalid = ["0", "0.0Gi", "-1Gi", "+1Gi", "1GB", "1gi", 10, "1".repeat(65), ".5Gi", "1.5Gi", "1.", "1500m"];
    invalid.push("0.0000000001", "1e-3", "01Gi", "1025Pi", "1152921504606846977", "9999999999999999999Ei", "1e999");
    for (const storage of invalid) {
      assert.deepEqual(
        issuesOf({ image: "nginx", storage }).map((issue) => issue.path),
        ["spec.storage"],
        String(storage),
      );
    }
    for (const storage of ["1", "1Gi", "500M", "1536Mi", "1e9", "1E+3", "1E", "1Ei", "1024Pi", "1152921504606846976"]) {
      assert.equal(validateSpec({ image: "nginx", storage }).ok, true, storage);
    }
  });

  test("a request may not exceed its limit; quantities are checked per resource", () => {
    // GIVEN a cpu request above its limit next to a malformed memory limit
    const spec = { image: "nginx", resources: { requests: { cpu: "2" }, limits: { cpu: "500m", memory: "lots" } } };
    // THEN both are reported, as the apiserver reports a CEL rule next to a pattern error
    assert.deepEqual(
      issuesOf(spec)
        .map((issue) => issue.path)
        .sort(),
      ["spec.resources.limits.memory", "spec.resources.requests.cpu"],
    );
    const equal = { requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "1000m", memory: "1024Mi" } };
    assert.equal(validateSpec({ image: "nginx", resources: equal }).ok, true);
    assert.deepEqual(
      issuesOf({ image: "nginx", resources: { requests: { gpu: "1" } } }).map((issue) => issue.path),
      ["spec.resources.requests.gpu"],
    );
  });

  test("podSecurityLevel is Restricted or Baseline, and optional", () => {
    assert.equal(validateSpec({ image: "nginx", podSecurityLevel: "Baseline" }).ok, true);
    assert.deepEqual(
      issuesOf({ image: "nginx", podSecurityLevel: "Privileged" }).map((issue) => issue.path),
      ["spec.podSecurityLevel"],
    );
  });

  test("storageClassName needs storage", () => {
    assert.deepEqual(
      issuesOf({ image: "nginx", storageClassName: "fast" }).map((issue) => issue.path),
      ["spec.storageClassName"],
    );
    assert.equal(validateSpec({ image: "nginx", storage: "1Gi", storageClassName: "fast" }).ok, true);
  });

  test("a spec that is not an object", () => {
    for (const input of ["nginx", [], 42, undefined]) {
      assert.deepEqual(
        issuesOf(input).map((issue) => issue.path),
        ["spec"],
      );
    }
  });
});

describe("myAppInstanceSpecSchema", () => {
  test("describes every field (the text of kubectl explain)", () => {
    const schema = z.toJSONSchema(myAppInstanceSpecSchema, { io: "input" }) as {
      description?: string;
      properties: Record<string, { description?: string }>;
    };
    assert.ok(schema.description);
    for (const [name, property] of Object.entries(schema.properties)) {
      assert.ok((property.description ?? "").length > 20, `${name} has no description`);
    }
  });

  test("has the field names the other layers code against", () => {
    assert.deepEqual(Object.keys(myAppInstanceSpecSchema.shape), [
      "replicas",
      "image",
      "port",
      "storage",
      "storageClassName",
      "storageReclaimPolicy",
      "chart",
      "values",
      "resources",
      "podSecurityLevel",
    ]);
  });
});
