/**
 * The provider host runs with `Object.prototype.__proto__` disabled although the engine starts it without our
 * flags: provider/impl-loader.js applies chart/proto-guard.ts when the implementation loads. Proven on the real
 * host (@pulumi/pulumi's dynamic-provider, started as the engine starts it, with no Node flags) over its gRPC
 * interface: its libraries (grpc-js, google-protobuf, Pulumi's RPC layer) and our check (zod) keep answering, a
 * hostile value path fails the check naming the field, and an input key `__proto__` fails that call only (without
 * the guard it vanished silently).
 * No cluster: every check here ends before the apiserver would be asked.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { createServer, type AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { providerModuleText } from "../../../provider/provider.ts";

const require = createRequire(import.meta.url);
const hostScript = require.resolve("@pulumi/pulumi/cmd/dynamic-provider");
const fromHost = createRequire(hostScript);
const grpc = fromHost("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
const { Struct } = fromHost("google-protobuf/google/protobuf/struct_pb") as {
  Struct: { fromJavaScript(value: Record<string, unknown>): unknown };
};
const providerProto = fromHost("../../proto/provider_pb") as {
  CheckRequest: new () => {
    setUrn(u: string): void;
    setOlds(s: unknown): void;
    setNews(s: unknown): void;
    serializeBinary(): Uint8Array;
  };
  CheckResponse: { deserializeBinary(bytes: Uint8Array): CheckResponse };
};
const providerGrpc = fromHost("../../proto/provider_grpc_pb") as {
  ResourceProviderClient: new (address: string, credentials: unknown) => RpcClient;
};

interface CheckResponse {
  getFailuresList(): { getProperty(): string; getReason(): string }[];
  getInputs(): { toJavaScript(): Record<string, unknown> } | undefined;
}
interface RpcClient {
  makeUnaryRequest(
    method: string,
    serialize: (message: Buffer) => Buffer,
    deserialize: (reply: Buffer) => CheckResponse,
    argument: Buffer,
    callback: (error: Error | null, response?: CheckResponse) => void,
  ): void;
  close(): void;
}

const urn = "urn:pulumi:dev::shop::pulumi-nodejs:dynamic/myapp:MyAppInstance::web";
const owner = "organization/shop/dev";

let client: RpcClient;
let stderr = "";
const cleanups: (() => void)[] = [];
after(() => cleanups.reverse().forEach((cleanup) => cleanup()));

before(async () => {
  // An engine address that accepts connections and answers nothing, as the host only needs one to exist.
  const engine = createServer((socket) => socket.on("error", () => {}));
  engine.listen(0, "127.0.0.1");
  await once(engine, "listening");
  cleanups.push(() => engine.close());
  // GIVEN the host as the engine starts it: no Node flags of ours, our implementation through the loader
  const host = spawn(process.execPath, [hostScript, `127.0.0.1:${(engine.address() as AddressInfo).port}`], {
    env: {
      ...process.env,
      NODE_OPTIONS: "",
      MYAPP_PROVIDER_IMPL: pathToFileURL(require.resolve("../../../provider/impl-loader.js")).href,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => host.kill("SIGKILL"));
  host.stderr.on("data", (chunk: Buffer) => (stderr += String(chunk)));
  const [first] = (await once(host.stdout, "data")) as [Buffer];
  const port = String(first).trim().split("\n")[0];
  assert.match(port ?? "", /^\d+$/, `the host prints its port first: ${String(first)} ${stderr}`);
  client = new providerGrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  cleanups.push(() => client.close());
});

/**
 * One Check call, as the engine makes it during `pulumi up` (previewing false: no dry run against a cluster).
 * `rename` rewrites key names in the encoded request: google-protobuf, here as in the host, cannot hold a key
 * `__proto__` in a JS object, but the engine (Go) can send one, so the test spells it in the bytes.
 */
function check(news: Record<string, unknown>, rename?: { from: string; to: string }): Promise<CheckResponse> {
  const request = new providerProto.CheckRequest();
  request.setUrn(urn);
  request.setOlds(Struct.fromJavaScript({}));
  request.setNews(
    Struct.fromJavaScript({ __provider: providerModuleText, owner, logicalName: "web", previewing: false, ...news }),
  );
  let bytes = Buffer.from(request.serializeBinary());
  if (rename) {
    assert.equal(rename.from.length, rename.to.length, "a same-length name keeps the encoding valid");
    bytes = Buffer.from(bytes.toString("latin1").replaceAll(rename.from, rename.to), "latin1");
  }
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      "/pulumirpc.ResourceProvider/Check",
      (message: Buffer) => message,
      (reply: Buffer) => providerProto.CheckResponse.deserializeBinary(new Uint8Array(reply)),
      bytes,
      (error: Error | null, response?: CheckResponse) => (error ? reject(error) : resolve(response!)),
    ),
  );
}

const failuresOf = (response: CheckResponse) =>
  response.getFailuresList().map((failure) => ({ property: failure.getProperty(), reason: failure.getReason() }));

describe("the dynamic-provider host, with the implementation loaded", () => {
  test("checks an instance: grpc-js, google-protobuf, Pulumi's RPC layer and zod work under the guard", async () => {
    const response = await check({ image: "nginx:1.27", chart: { configMap: "app" }, values: { a: { b: 1 } } });
    assert.deepEqual(failuresOf(response), []);
    const inputs = response.getInputs()?.toJavaScript() ?? {};
    assert.equal(inputs["image"], "nginx:1.27");
    assert.deepEqual(inputs["values"], { a: { b: 1 } });
  });

  test("a hostile value path fails the check naming the field", async () => {
    const response = await check({
      image: "nginx:1.27",
      chart: { configMap: "app", valuePaths: { imageTag: "__proto__.deletionTimestamp" } },
    });
    const [failure, ...more] = failuresOf(response);
    assert.deepEqual(more, []);
    assert.match(failure?.reason ?? "", /chart: valuePaths\.imageTag: must be a dotted value path .*__proto__/);
  });

  test("a __proto__ key in the inputs fails that call loudly, not silently dropped, and the host serves on", async () => {
    // WHEN an input object carries a key __proto__: google-protobuf's Struct map stores keys by assignment, so
    // without the guard that object's prototype would be set and the key would vanish before any check saw it;
    // with it, decoding the request throws and the call fails (it cannot name the field: no code of ours has run)
    const values = { zzproto__: { replicaCount: 9 } };
    const rename = { from: "zzproto__", to: "__proto__" };
    await assert.rejects(
      check({ image: "nginx:1.27", chart: { configMap: "app" }, values }, rename),
      (error: Error) => {
        assert.match(error.message, /^13 INTERNAL: Error deserializing request/);
        return true;
      },
    );
    // THEN the next call is answered as before
    assert.deepEqual(failuresOf(await check({ image: "nginx:1.27" })), []);
    assert.doesNotMatch(stderr, /uncaught/i);
  });
});
