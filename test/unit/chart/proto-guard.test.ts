/**
 * chart/proto-guard.ts: `Object.prototype.__proto__` throws in the operator and the provider host, and the
 * libraries they run keep working under it. Each case runs in a child process, so the guard (permanent by design)
 * never reaches this test runner.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { defaultResources } from "../../../components/settings.ts";
import { nodeOptionsFor } from "../../../components/node-heap.ts";

const repoRoot = new URL("../../../", import.meta.url);

/** Runs `script` (an ES module, cwd the repository) in a fresh Node; returns its stdout, failing on a non-zero exit. */
function runNode(script: string, options: { args?: string[]; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync(process.execPath, [...(options.args ?? []), "--input-type=module", "-e", script], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "", ...options.env },
    timeout: 60_000,
  });
  assert.equal(result.status, 0, `exit ${result.status}: ${result.stderr}`);
  return result.stdout;
}

const probe = `
  const attempt = (f) => { try { f(); return "ok"; } catch (e) { return e.code ?? e.name; } };
  const report = {
    read: attempt(() => ({}).__proto__),
    write: attempt(() => { const o = {}; o["__proto__"] = { polluted: true }; }),
    restore: attempt(() => Object.defineProperty(Object.prototype, "__proto__", { get() { return 1; } })),
    jsonOwnKey: Object.hasOwn(JSON.parse('{"__proto__":1}'), "__proto__"),
    literal: Object.getPrototypeOf({ __proto__: null }) === null,
    getSet: attempt(() => Object.setPrototypeOf({}, Object.getPrototypeOf([]))),
  };
`;

describe("disableProto", () => {
  test("makes __proto__ throw for reads and writes, for good, and leaves JSON, literals and get/setPrototypeOf alone", () => {
    // GIVEN a plain Node (no flag) WHEN the guard is applied, twice
    const out = runNode(`
      import { disableProto, protoDisabled } from "./chart/proto-guard.ts";
      const before = protoDisabled();
      disableProto();
      disableProto();
      ${probe}
      console.log(JSON.stringify({ before, after: protoDisabled(), ...report }));
    `);
    // THEN every use of the accessor throws Node's code, it cannot be put back, and the rest works
    assert.deepEqual(JSON.parse(out), {
      before: false,
      after: true,
      read: "ERR_PROTO_ACCESS",
      write: "ERR_PROTO_ACCESS",
      restore: "TypeError",
      jsonOwnKey: true,
      literal: true,
      getSet: "ok",
    });
  });

  for (const mode of ["throw", "delete"]) {
    test(`works on top of Node's --disable-proto=${mode}`, () => {
      const out = runNode(
        `
        import { disableProto, protoDisabled } from "./chart/proto-guard.ts";
        const before = protoDisabled();
        disableProto();
        ${probe}
        console.log(JSON.stringify({ before, after: protoDisabled(), read: report.read, write: report.write, restore: report.restore }));
      `,
        { args: [`--disable-proto=${mode}`] },
      );
      assert.deepEqual(JSON.parse(out), {
        before: mode === "throw",
        after: true,
        read: "ERR_PROTO_ACCESS",
        write: "ERR_PROTO_ACCESS",
        restore: "TypeError",
      });
    });
  }

  test("the operator container's NODE_OPTIONS turn it on (Node accepts the flag there)", () => {
    const nodeOptions = nodeOptionsFor(defaultResources).join(" ");
    assert.match(nodeOptions, /--disable-proto=throw/);
    const out = runNode(
      `import { protoDisabled } from "./chart/proto-guard.ts"; console.log(JSON.stringify(protoDisabled()));`,
      { env: { NODE_OPTIONS: nodeOptions } },
    );
    assert.equal(JSON.parse(out), true);
  });
});

describe("the libraries of the operator and the provider host under the guard", () => {
  test("yaml, zod, protobufjs, google-protobuf, grpc-js, undici, pino and prom-client work, and read __proto__ keys as data", () => {
    // GIVEN the guard, applied before any library loads
    const out = runNode(`
      import { disableProto } from "./chart/proto-guard.ts";
      disableProto();
      const { createServer } = await import("node:http");
      const { Writable } = await import("node:stream");
      const { parse, stringify } = await import("yaml");
      const { z } = await import("zod");
      const protobuf = (await import("protobufjs")).default;
      const { Struct } = (await import("node:module")).createRequire(import.meta.url)("google-protobuf/google/protobuf/struct_pb.js");
      const grpc = await import("@grpc/grpc-js");
      const { request } = await import("undici");
      const { pino } = await import("pino");
      const prom = await import("prom-client");
      const results = {};

      // yaml: a __proto__ key is an own key both ways
      const doc = parse("__proto__:\\n  polluted: true\\nname: x\\n");
      results.yaml = Object.hasOwn(doc, "__proto__") && ({}).polluted === undefined && stringify(doc).includes("__proto__");

      // zod: the api's schemas
      const { validateSpec } = await import("./api/validate.ts");
      results.zod = validateSpec({ image: "nginx:1.27", values: JSON.parse('{"a":{"__proto__":1}}') }).ok === false &&
        z.object({ a: z.string() }).safeParse({ a: "b" }).success;

      // protobufjs: a message type built, encoded and decoded
      const root = protobuf.parse('syntax = "proto3"; message M { string name = 1; map<string, string> labels = 2; }').root;
      const M = root.lookupType("M");
      const decoded = M.toObject(M.decode(M.encode(M.fromObject({ name: "n", labels: { a: "b" } })).finish()));
      results.protobufjs = decoded.name === "n" && decoded.labels.a === "b";

      // google-protobuf: the Struct Pulumi's RPCs carry inputs in
      const struct = Struct.deserializeBinary(Struct.fromJavaScript({ a: [1, { b: "c" }], d: null }).serializeBinary());
      results.googleProtobuf = JSON.stringify(struct.toJavaScript()) === '{"a":[1,{"b":"c"}],"d":null}';

      // grpc-js: a unary call over a real socket
      const service = { echo: { path: "/t.T/Echo", requestStream: false, responseStream: false,
        requestSerialize: (v) => Buffer.from(JSON.stringify(v)), requestDeserialize: (b) => JSON.parse(String(b)),
        responseSerialize: (v) => Buffer.from(JSON.stringify(v)), responseDeserialize: (b) => JSON.parse(String(b)) } };
      const server = new grpc.Server();
      server.addService(service, { echo: (call, callback) => callback(null, { said: call.request.say }) });
      const port = await new Promise((resolve, reject) =>
        server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
      const Client = grpc.makeGenericClientConstructor(service, "T");
      const client = new Client("127.0.0.1:" + port, grpc.credentials.createInsecure());
      const reply = await new Promise((resolve, reject) => client.echo({ say: "hi" }, (e, r) => (e ? reject(e) : resolve(r))));
      results.grpc = reply.said === "hi";
      client.close();
      server.forceShutdown();

      // undici: a request to a local server, headers and JSON body
      const http = createServer((req, res) => { res.setHeader("x-k", "v"); res.end('{"__proto__":{"p":1}}'); });
      await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
      const response = await request("http://127.0.0.1:" + http.address().port + "/");
      const body = await response.body.json();
      results.undici = response.headers["x-k"] === "v" && Object.hasOwn(body, "__proto__") && ({}).p === undefined;
      http.close();

      // pino: a structured line; prom-client: a labelled counter in the exposition text
      const lines = [];
      const logger = pino({ base: null }, new Writable({ write(chunk, _, done) { lines.push(String(chunk)); done(); } }));
      logger.info({ values: JSON.parse('{"__proto__":{"x":1}}') }, "hello");
      await new Promise((resolve) => setImmediate(resolve));
      results.pino = lines.length === 1 && JSON.parse(lines[0]).msg === "hello";
      const registry = new prom.Registry();
      const counter = new prom.Counter({ name: "t_total", help: "t", labelNames: ["result"], registers: [registry] });
      counter.inc({ result: "success" });
      results.promClient = (await registry.metrics()).includes('t_total{result="success"} 1');

      // @pulumi/pulumi: what the dynamic-provider host does with inputs (deserializeProperties)
      const pulumi = await import("@pulumi/pulumi");
      const inputs = await pulumi.runtime.deserializeProperties(Struct.fromJavaScript({ image: "nginx", values: { a: 1 } }));
      results.pulumi = inputs.image === "nginx" && inputs.values.a === 1;

      console.log(JSON.stringify(results));
    `);
    // THEN each answers as it does without the guard
    assert.deepEqual(JSON.parse(out.trim().split("\n").at(-1) ?? "{}"), {
      yaml: true,
      zod: true,
      protobufjs: true,
      googleProtobuf: true,
      grpc: true,
      undici: true,
      pino: true,
      promClient: true,
      pulumi: true,
    });
  });
});
