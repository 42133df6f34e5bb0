/**
 * Values are data: hostile value paths and hostile keys in `spec.values` (`__proto__`, `constructor`,
 * `prototype`, at any depth) never reach a prototype shared by the process, and zod refuses them naming the field.
 * Property-based (fast-check): each property runs a few hundred generated cases; a failure prints the smallest
 * case it shrank to.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import fc from "fast-check";
import { chartRules, maxNamedValueKeys, reservedValueKeys } from "../../../api/chart.ts";
import { valuePathFields, type MyAppInstanceSpec, type ValuePathField } from "../../../api/index.ts";
import { validateSpec } from "../../../api/validate.ts";
import { chartValues, setPath } from "../../../chart/values.ts";

// ---- what "no global prototype changed" means ----------------------------------------------------------------

const globalPrototypes = {
  Object: Object.prototype,
  Array: Array.prototype,
  Function: Function.prototype,
  String: String.prototype,
  Number: Number.prototype,
  Boolean: Boolean.prototype,
} as const;

type Snapshot = Map<object, { proto: object | null; properties: Map<PropertyKey, PropertyDescriptor> }>;

/** Every own property (descriptor, so accessors count) and the prototype of each global prototype. */
function snapshot(): Snapshot {
  return new Map(
    Object.values(globalPrototypes).map((prototype) => [
      prototype,
      {
        proto: Object.getPrototypeOf(prototype) as object | null,
        properties: new Map(
          Reflect.ownKeys(prototype).map((key) => [key, Object.getOwnPropertyDescriptor(prototype, key)!]),
        ),
      },
    ]),
  );
}

/** What differs from `before`, in words; undoes it too, so one failing case does not poison the rest of the run. */
function changesSince(before: Snapshot): string[] {
  const changes: string[] = [];
  for (const [name, prototype] of Object.entries(globalPrototypes)) {
    const was = before.get(prototype)!;
    if (Object.getPrototypeOf(prototype) !== was.proto) {
      changes.push(`${name}.prototype's prototype`);
      Object.setPrototypeOf(prototype, was.proto);
    }
    for (const key of Reflect.ownKeys(prototype)) {
      const now = Object.getOwnPropertyDescriptor(prototype, key)!;
      const old = was.properties.get(key);
      if (old === undefined) {
        changes.push(`${name}.prototype.${String(key)} added`);
        Reflect.deleteProperty(prototype, key);
      } else if (!sameDescriptor(old, now)) {
        changes.push(`${name}.prototype.${String(key)} changed`);
        Object.defineProperty(prototype, key, old);
      }
    }
    for (const key of was.properties.keys()) {
      if (!Object.hasOwn(prototype, key)) {
        changes.push(`${name}.prototype.${String(key)} removed`);
        Object.defineProperty(prototype, key, was.properties.get(key)!);
      }
    }
  }
  return changes;
}

function sameDescriptor(a: PropertyDescriptor, b: PropertyDescriptor): boolean {
  return (
    a.value === b.value &&
    a.get === b.get &&
    a.set === b.set &&
    a.writable === b.writable &&
    a.enumerable === b.enumerable &&
    a.configurable === b.configurable
  );
}

/** Runs `run` and asserts it left every global prototype as it found it. */
function leavesPrototypesAlone(run: () => void): void {
  const before = snapshot();
  try {
    run();
  } finally {
    assert.deepEqual(changesSince(before), [], "a global prototype changed");
  }
}

// ---- hostile input ---------------------------------------------------------------------------------------------

/** Names that mean something to JavaScript objects, and ordinary ones. */
const hostileKey = fc.oneof(
  fc.constantFrom(...reservedValueKeys),
  fc.constantFrom("__defineGetter__", "hasOwnProperty", "toString", "valueOf", "length", "0", "isPrototypeOf"),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/),
);

/** A dotted path of hostile segments (empty segments too: setPath must be safe whatever it is given). */
const hostilePath = fc
  .array(fc.oneof({ weight: 6, arbitrary: hostileKey }, { weight: 1, arbitrary: fc.constant("") }), {
    minLength: 1,
    maxLength: 5,
  })
  .map((segments) => segments.join("."));

/**
 * `spec.values` as the apiserver sends it: JSON text, parsed. JSON.parse makes `__proto__` an own key (an object
 * literal or an assignment would set the prototype instead), which is exactly what the operator reads.
 */
const hostileValuesJson = fc.letrec<{ value: string; object: string; array: string; leaf: string }>((tie) => ({
  value: fc.oneof({ depthIdentifier: "values", maxDepth: 4 }, tie("leaf"), tie("object"), tie("array")),
  leaf: fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)).map((leaf) => JSON.stringify(leaf)),
  object: fc
    .array(fc.tuple(hostileKey, tie("value")), { maxLength: 4, depthIdentifier: "values" })
    .map((entries) => `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`),
  array: fc.array(tie("value"), { maxLength: 3, depthIdentifier: "values" }).map((items) => `[${items.join(",")}]`),
})).object;

const hostileValuePaths = fc.record(
  Object.fromEntries(valuePathFields.map((field) => [field, hostilePath])) as Record<
    ValuePathField,
    fc.Arbitrary<string>
  >,
);

/** A spec as the operator would hold it had a hostile one got past every check (so nothing here relies on zod). */
function unchecked(valuePaths: Record<ValuePathField, string>, valuesJson: string): MyAppInstanceSpec {
  return {
    image: `registry.example.com/app:1.2.3@sha256:${"a".repeat(64)}`,
    replicas: 2,
    port: 8080,
    storage: "1Gi",
    storageReclaimPolicy: "Retain",
    chart: { configMap: "chart", valuePaths },
    values: JSON.parse(valuesJson) as Record<string, unknown>,
  };
}

/** The value at a dotted path, following own properties only. */
function ownAt(values: unknown, path: string): unknown {
  let node = values;
  for (const key of path.split(".")) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** An independent (recursive) reference for where the reserved keys are, as the apiserver would name them. */
function reservedKeyFields(value: unknown, path: string): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => reservedKeyFields(item, `${path}[${index}]`));
  if (typeof value !== "object" || value === null) return [];
  return Object.keys(value).flatMap((key) => [
    ...((reservedValueKeys as readonly string[]).includes(key) ? [`${path}.${key}`] : []),
    ...reservedKeyFields((value as Record<string, unknown>)[key], `${path}.${key}`),
  ]);
}

const runs = { numRuns: 300 };

// ---- the values builder ----------------------------------------------------------------------------------------

describe("the values builder under hostile paths and values", () => {
  test("__proto__.deletionTimestamp (the issue's attack) stays a key of the values", () => {
    leavesPrototypesAlone(() => {
      // GIVEN the attack as it was filed: the image tag placed at __proto__.deletionTimestamp
      const values = chartValues(
        unchecked({ ...defaultPaths(), imageTag: "__proto__.deletionTimestamp" }, '{"a":{"__proto__":{"b":1}}}'),
      );
      // THEN it is data in the values Helm gets, and no object in the process grew a deletionTimestamp
      assert.equal(ownAt(values, "__proto__.deletionTimestamp"), "1.2.3");
      assert.equal(({} as Record<string, unknown>)["deletionTimestamp"], undefined);
      assert.equal(JSON.parse(JSON.stringify(values)).__proto__.deletionTimestamp, "1.2.3");
      assert.deepEqual(JSON.parse(JSON.stringify(values)).a, JSON.parse('{"__proto__":{"b":1}}'));
    });
  });

  test("no hostile path and no hostile values change a global prototype; every typed value lands as data", () => {
    fc.assert(
      fc.property(hostileValuePaths, hostileValuesJson, (valuePaths, valuesJson) => {
        leavesPrototypesAlone(() => {
          const spec = unchecked(valuePaths, valuesJson);
          const values = chartValues(spec);
          // The last field written cannot be overwritten by another: it is where its path says, as own data.
          const last = valuePathFields.filter((field) => valuePaths[field] !== "").at(-1);
          if (last !== undefined) assert.notEqual(ownAt(values, valuePaths[last]), undefined, valuePaths[last]);
          // Plain JSON data: what Helm receives says the same after a round trip.
          assert.deepEqual(JSON.parse(JSON.stringify(values)), values);
          // spec.values itself is left as it was.
          assert.deepEqual(spec.values, JSON.parse(valuesJson));
        });
      }),
      runs,
    );
  });

  test("setPath alone, on values that already hold hostile keys, writes only own properties", () => {
    fc.assert(
      fc.property(hostileValuesJson, hostilePath, fc.jsonValue(), (valuesJson, path, value) => {
        leavesPrototypesAlone(() => {
          const values = JSON.parse(valuesJson) as Record<string, unknown>;
          setPath(values, path, value);
          assert.deepEqual(ownAt(values, path), value);
        });
      }),
      runs,
    );
  });

  test("under --disable-proto=throw (as the operator runs) hostile input is data, not an exception", () => {
    // GIVEN a process where any use of Object.prototype.__proto__ throws, as the operator's
    const script = `
      import { chartValues } from "./chart/values.ts";
      const values = chartValues({
        image: "nginx:1.27", replicas: 1, port: 8080, storageReclaimPolicy: "Retain",
        chart: { configMap: "c", valuePaths: { imageTag: "__proto__.deletionTimestamp", replicas: "constructor.prototype.x", port: "a.__proto__" } },
        values: JSON.parse('{"__proto__":{"y":1},"a":[{"constructor":{"prototype":{}}}]}'),
      });
      process.stdout.write(JSON.stringify(values));
    `;
    // WHEN the values are built there
    const out = execFileSync(process.execPath, ["--disable-proto=throw", "--input-type=module", "-e", script], {
      cwd: new URL("../../../", import.meta.url),
      encoding: "utf8",
    });
    // THEN nothing threw and every hostile key is a key
    assert.deepEqual(
      JSON.parse(out),
      JSON.parse(
        '{"__proto__":{"y":1,"deletionTimestamp":"1.27"},"a":{"__proto__":8080},' +
          '"constructor":{"prototype":{"x":1}},"image":{"repository":"nginx"}}',
      ),
    );
  });
});

function defaultPaths(): Record<ValuePathField, string> {
  return {
    replicas: "replicaCount",
    imageRepository: "image.repository",
    imageTag: "image.tag",
    imageDigest: "",
    port: "service.port",
    storage: "",
  };
}

// ---- zod: every layer that checks a spec refuses them, naming the field ---------------------------------------

describe("zod refuses hostile value paths and values keys, naming the field", () => {
  const base = { image: "nginx:1.27", chart: { configMap: "chart" } };
  const segment = fc.oneof(fc.constantFrom(...reservedValueKeys), fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/));
  const wellFormedPath = fc.array(segment, { minLength: 1, maxLength: 5 }).map((segments) => segments.join("."));
  const isReserved = (path: string) =>
    path.split(".").some((s) => (reservedValueKeys as readonly string[]).includes(s));

  test("a value path is refused exactly when a segment is __proto__, constructor or prototype", () => {
    fc.assert(
      fc.property(fc.constantFrom(...valuePathFields), wellFormedPath, (field, path) => {
        leavesPrototypesAlone(() => {
          const verdict = validateSpec({ ...base, chart: { ...base.chart, valuePaths: { [field]: path } } });
          if (!isReserved(path)) {
            assert.ok(verdict.ok, JSON.stringify(verdict));
            return;
          }
          assert.ok(!verdict.ok, `${path} accepted`);
          assert.deepEqual(verdict.issues, [{ path: `spec.chart.valuePaths.${field}`, message: chartRules.valuePath }]);
          assert.match(chartRules.valuePath, /no segment __proto__, constructor or prototype/);
        });
      }),
      runs,
    );
  });

  test("spec.values is refused exactly when it holds a reserved key, each one named by its path", () => {
    fc.assert(
      fc.property(hostileValuesJson, (valuesJson) => {
        leavesPrototypesAlone(() => {
          const values = JSON.parse(valuesJson) as unknown;
          const verdict = validateSpec({ ...base, values });
          const expected = reservedKeyFields(values, "spec.values");
          if (expected.length === 0) {
            assert.ok(verdict.ok, JSON.stringify(verdict));
            return;
          }
          assert.ok(!verdict.ok, `${valuesJson} accepted`);
          // The first ones by path, then how many more: a refusal does not grow with the tenant's values.
          const named = expected.slice(0, maxNamedValueKeys);
          assert.deepEqual(
            verdict.issues.map((issue) => issue.path),
            expected.length > named.length ? [...named, "spec.values"] : named,
          );
          for (const issue of verdict.issues.slice(0, named.length)) assert.equal(issue.message, chartRules.valueKey);
        });
      }),
      runs,
    );
  });

  test("150,000 reserved keys are refused in a dozen issues, not one per key", () => {
    // GIVEN values of 2.7 MB (under the apiserver's 3 MiB) that repeat a reserved key 150,000 times
    const values = { a: Array.from({ length: 150_000 }, () => JSON.parse('{"constructor":1}') as unknown) };
    // WHEN they are validated
    const verdict = validateSpec({ ...base, values });
    // THEN the first keys are named and the rest counted
    assert.ok(!verdict.ok);
    assert.equal(verdict.issues.length, maxNamedValueKeys + 1);
    assert.equal(verdict.issues[0]?.path, "spec.values.a[0].constructor");
    assert.deepEqual(verdict.issues.at(-1), {
      path: "spec.values",
      message: `has ${150_000 - maxNamedValueKeys} more keys named __proto__, constructor or prototype besides the ${maxNamedValueKeys} named`,
    });
  });

  test("a top-level __proto__ key is refused too (zod's record alone drops it without a word)", () => {
    const verdict = validateSpec({ ...base, values: JSON.parse('{"__proto__":{"replicaCount":9},"ok":1}') });
    assert.deepEqual(verdict.ok ? [] : verdict.issues, [
      { path: "spec.values.__proto__", message: chartRules.valueKey },
    ]);
  });
});
