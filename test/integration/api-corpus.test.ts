/**
 * The proof that zod and the apiserver agree: every case of test/fixtures/instances gets the same verdict from
 * `validateInstance` and from a server-side dry-run create against the local cluster (with the generated CRD
 * installed), and both name the expected field. Also: spec updates (CEL transition rules vs
 * `checkSpecTransition`), status writes, the scale subresource, printer columns, and the published
 * descriptions behind `kubectl explain`.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`). Leaves the CRD installed; deletes
 * the few objects it creates (all named `corpus-*`) and the namespace of its own it made for them.
 */
import assert from "node:assert/strict";
import http from "node:http";
import https from "node:https";
import { after, before, describe, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import {
  apiVersion,
  buildCrd,
  category,
  checkSpecTransition,
  crdName,
  group,
  kind,
  myAppInstanceSpecSchema,
  plural,
  shortName,
  validateInstance,
  validateStatus,
  version,
} from "../../api/index.ts";
import { instanceCases, namesField, statusCases, transitionCases } from "../fixtures/instances/corpus.ts";

// Objects this run creates get a unique suffix, so a leftover of an earlier run (say, held by a finalizer) never collides.
const run = Date.now().toString(36);
// A namespace of its own: the CRD's verdict alone, never an admission webhook or policy of a platform installed for
// another namespace (the dev stack's webhooks hold `default`, and fail closed while its operator is stopped).
const namespace = `corpus-${run}`;
const fieldManager = "myapp-api-corpus-test";
const resources = `/apis/${group}/${version}/namespaces/${namespace}/${plural}`;

interface Response {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

interface Verdict {
  readonly ok: boolean;
  /** Fields the apiserver named: `details.causes[].field`, and the paths of strict decoding errors. */
  readonly fields: string[];
  readonly message: string;
}

let kc: KubeConfig;

async function request(
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
  accept = "application/json",
): Promise<Response> {
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined) throw new Error("the kubeconfig has no current cluster");
  const url = new URL(path, server);
  const options: https.RequestOptions = { method, headers: { "Content-Type": contentType, Accept: accept } };
  await kc.applyToHTTPSOptions(options);
  const send = url.protocol === "https:" ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        try {
          resolve({
            status: res.statusCode ?? 0,
            body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
          });
        } catch {
          reject(new Error(`${method} ${path}: ${res.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`));
        }
      });
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The apiserver's verdict from a write's response: accepted, or rejected with the fields it named. */
function verdictOf(response: Response, what: string): Verdict {
  if (response.status === 200 || response.status === 201) return { ok: true, fields: [], message: "" };
  const message = String(response.body["message"] ?? "");
  // 422 is a validation verdict; 400 is strict field validation's (unknown fields). Anything else is a broken test.
  if (response.status !== 422 && response.status !== 400) {
    throw new Error(`${what}: unexpected ${response.status}: ${message}`);
  }
  const details = response.body["details"] as { causes?: { field?: string }[] } | undefined;
  const causes = (details?.causes ?? []).map((cause) => cause.field ?? "").filter((field) => field !== "<nil>");
  const unknown = [...message.matchAll(/unknown field "([^"]+)"/g)].map((match) => match[1] ?? "");
  return { ok: false, fields: [...causes, ...unknown], message };
}

async function dryRunCreate(object: unknown): Promise<Verdict> {
  const response = await request("POST", `${resources}?dryRun=All&fieldValidation=Strict`, object);
  return verdictOf(response, "dry-run create");
}

async function create(name: string, spec: Record<string, unknown>): Promise<void> {
  const object = { apiVersion, kind, metadata: { name }, spec: { image: "nginx", ...spec } };
  const response = await request("POST", `${resources}?fieldValidation=Strict`, object);
  assert.equal(response.status, 201, `create ${name}: ${JSON.stringify(response.body)}`);
  created.push(name);
}

async function mergePatch(path: string, patch: unknown, dryRun: boolean): Promise<Response> {
  const query = `fieldValidation=Strict${dryRun ? "&dryRun=All" : ""}`;
  return request("PATCH", `${path}?${query}`, patch, "application/merge-patch+json");
}

const created: string[] = [];

async function eventually<T>(what: string, attempt: () => Promise<T | undefined>, seconds = 60): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const result = await attempt();
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds}s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

before(async () => {
  const path = process.env["KUBECONFIG"];
  if (path === undefined || path === "") throw new Error("KUBECONFIG must name the local cluster's kubeconfig");
  kc = new KubeConfig();
  kc.loadFromFile(path);

  const crd = buildCrd();
  const applied = await request(
    "PATCH",
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}?fieldManager=${fieldManager}&force=true&fieldValidation=Strict`,
    crd,
    "application/apply-patch+yaml",
  );
  assert.ok(applied.status === 200 || applied.status === 201, `apply CRD: ${JSON.stringify(applied.body)}`);

  await eventually("the CRD to be Established", async () => {
    const { body } = await request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
    const conditions = (body["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
    return conditions?.some((c) => c.type === "Established" && c.status === "True") ? true : undefined;
  });
  const made = await request("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace },
  });
  assert.equal(made.status, 201, `create namespace: ${JSON.stringify(made.body)}`);
  // Established can come a moment before the endpoint serves; wait until a dry-run create gets a verdict.
  await eventually("the myappinstances endpoint", async () => {
    const probe = { apiVersion, kind, metadata: { name: "corpus-probe" }, spec: { image: "nginx" } };
    const response = await request("POST", `${resources}?dryRun=All`, probe);
    return response.status === 404 ? undefined : true;
  });
});

after(async () => {
  for (const name of created) await request("DELETE", `${resources}/${name}`);
  await request("DELETE", `/api/v1/namespaces/${namespace}`);
});

describe("every corpus case gets the same verdict from zod and the apiserver", () => {
  for (const corpusCase of instanceCases()) {
    test(corpusCase.name, async () => {
      const zod = validateInstance(corpusCase.document);
      const server = await dryRunCreate(corpusCase.document);
      const zodPaths = zod.ok ? [] : zod.issues.map((issue) => issue.path);

      assert.equal(zod.ok, corpusCase.valid, `zod: ${JSON.stringify(zodPaths)}`);
      assert.equal(server.ok, zod.ok, `apiserver disagrees with zod: ${server.message}`);
      for (const field of corpusCase.expect) {
        assert.ok(namesField(zodPaths, field), `zod does not name ${field}: ${JSON.stringify(zodPaths)}`);
        assert.ok(namesField(server.fields, field), `apiserver does not name ${field}: ${server.message}`);
      }
    });
  }
});

describe("a value that does not match its field's pattern", () => {
  // kubectl prints the apiserver's message: OpenAPI's `pattern` would print the regular expression itself.
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["spec.image", { image: "Not An Image" }, /spec\.image must be an OCI image reference/],
    ["spec.storage", { storage: "1.5Gi" }, /spec\.storage must be a whole number of bytes/],
    ["spec.storageClassName", { storage: "1Gi", storageClassName: "Fast_SSD" }, /must be a StorageClass name/],
    ["spec.resources.limits.cpu", { resources: { limits: { cpu: "lots" } } }, /spec\.resources\.limits\.cpu must be/],
    ["spec.chart.version", { chart: { configMap: "c", version: "^1.0" } }, /spec\.chart\.version must be an exact/],
  ];
  for (const [field, spec, says] of cases) {
    test(`${field} is refused saying what is allowed, not the regular expression`, async () => {
      const verdict = await dryRunCreate({
        apiVersion,
        kind,
        metadata: { name: "corpus-pattern" },
        spec: { image: "nginx", ...spec },
      });
      assert.equal(verdict.ok, false);
      assert.ok(namesField(verdict.fields, field), `${field}: ${verdict.message}`);
      assert.match(verdict.message, says);
      assert.doesNotMatch(verdict.message, /should match/);
    });
  }
});

describe("spec updates: CEL transition rules and checkSpecTransition agree", () => {
  for (const transition of transitionCases()) {
    test(transition.name, async () => {
      const name = `corpus-transition-${transition.name}-${run}`;
      await create(name, transition.old);
      // A merge patch replaces exactly the spec fields of `new` and removes those it lacks.
      const removed = Object.keys(transition.old).filter((key) => !(key in transition.new));
      const patch = { spec: { ...transition.new, ...Object.fromEntries(removed.map((key) => [key, null])) } };
      const server = verdictOf(await mergePatch(`${resources}/${name}`, patch, true), "dry-run update");

      const issues = checkSpecTransition(transition.old, transition.new);
      assert.equal(issues.length === 0, transition.expect === undefined, `TS: ${JSON.stringify(issues)}`);
      assert.equal(server.ok, issues.length === 0, `apiserver disagrees with TS: ${server.message}`);
      if (transition.expect !== undefined) {
        assert.ok(
          namesField(
            issues.map((issue) => issue.path),
            transition.expect,
          ),
          JSON.stringify(issues),
        );
        assert.ok(namesField(server.fields, transition.expect), `apiserver: ${server.message}`);
      }
    });
  }
});

describe("status writes: the status subresource and validateStatus agree", () => {
  const name = `corpus-status-${run}`;
  before(() => create(name, {}));

  for (const corpusCase of statusCases()) {
    test(corpusCase.name, async () => {
      const zod = validateStatus(corpusCase.document);
      const response = await mergePatch(`${resources}/${name}/status`, { status: corpusCase.document }, true);
      const server = verdictOf(response, "dry-run status update");
      const zodPaths = zod.ok ? [] : zod.issues.map((issue) => issue.path);

      assert.equal(zod.ok, corpusCase.valid, `zod: ${JSON.stringify(zodPaths)}`);
      assert.equal(server.ok, zod.ok, `apiserver disagrees with zod: ${server.message}`);
      for (const field of corpusCase.expect) {
        assert.ok(namesField(zodPaths, field), `zod does not name ${field}: ${JSON.stringify(zodPaths)}`);
        assert.ok(namesField(server.fields, field), `apiserver does not name ${field}: ${server.message}`);
      }
    });
  }
});

describe("the CRD serves what kubectl needs", () => {
  test("discovery has the short name and the category", async () => {
    const { body } = await request("GET", `/apis/${group}/${version}`);
    const resource = (body["resources"] as { name: string; shortNames?: string[]; categories?: string[] }[]).find(
      (r) => r.name === plural,
    );
    assert.deepEqual(resource?.shortNames, [shortName]);
    assert.deepEqual(resource?.categories, [category]);
  });

  test("kubectl scale works through the scale subresource", async () => {
    const name = `corpus-scale-${run}`;
    await create(name, { replicas: 1 });
    const scaled = await mergePatch(`${resources}/${name}/scale`, { spec: { replicas: 3 } }, false);
    assert.equal(scaled.status, 200, JSON.stringify(scaled.body));
    const { body: object } = await request("GET", `${resources}/${name}`);
    assert.equal((object["spec"] as { replicas: number }).replicas, 3);
    const { body: scale } = await request("GET", `${resources}/${name}/scale`);
    assert.equal(scale["kind"], "Scale");
    assert.equal((scale["spec"] as { replicas: number }).replicas, 3);

    const negative = verdictOf(
      await mergePatch(`${resources}/${name}/scale`, { spec: { replicas: -1 } }, true),
      "scale",
    );
    assert.equal(negative.ok, false);
  });

  test("kubectl get prints the printer columns", async () => {
    const table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    const { body } = await request("GET", resources, undefined, "application/json", table);
    const columns = (body["columnDefinitions"] as { name: string }[]).map((column) => column.name);
    // Endpoint and Message have priority 1: `kubectl get -o wide` shows them.
    assert.deepEqual(columns, ["Name", "Image", "Desired", "Ready", "Phase", "Age", "Endpoint", "Message"]);
  });

  test("kubectl explain shows the zod descriptions", async () => {
    const expected = myAppInstanceSpecSchema.shape.port.meta()?.description;
    assert.ok(expected);
    // The OpenAPI v3 document is rebuilt a moment after a CRD changes.
    await eventually("the published OpenAPI schema", async () => {
      const { status, body } = await request("GET", `/openapi/v3/apis/${group}/${version}`);
      if (status !== 200) return undefined;
      const schemas = (body["components"] as { schemas: Record<string, unknown> }).schemas;
      const instance = schemas[`com.example.${version}.${kind}`] as
        { properties: { spec: { properties: { port: { description?: string } } } } } | undefined;
      return instance?.properties.spec.properties.port.description === expected ? true : undefined;
    });
  });
});
