/** kube/client.ts against a local HTTP server: status mapping and throttling retries. */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test, type TestContext } from "node:test";
import { InvalidError, KubeClient, loadKubeConfig, NotFoundError, TooManyRequestsError } from "../../../kube/index.ts";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

async function clientFor(t: TestContext, handler: Handler): Promise<{ client: KubeClient; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c`;
  return { client: new KubeClient(loadKubeConfig({ kubeconfig })), requests };
}

function status(response: ServerResponse, code: number, reason: string, headers: Record<string, string> = {}): void {
  response.writeHead(code, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify({ kind: "Status", code, reason, message: `${reason} (test)` }));
}

test("a 429 with Retry-After is retried, like client-go", async (t) => {
  let calls = 0;
  const { client, requests } = await clientFor(t, (_request, response) => {
    calls += 1;
    if (calls === 1) return status(response, 429, "TooManyRequests", { "retry-after": "1" });
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ metadata: {}, items: [] }));
  });
  const list = await client.list("example.com/v1", "MyAppInstance", { namespace: "a" });
  assert.deepEqual(list.items, []);
  assert.deepEqual(requests, [
    "GET /apis/example.com/v1/namespaces/a/myappinstances",
    "GET /apis/example.com/v1/namespaces/a/myappinstances",
  ]);
});

test("a 429 without Retry-After, or one that persists, surfaces as TooManyRequestsError", async (t) => {
  const { client, requests } = await clientFor(t, (_request, response) => status(response, 429, "TooManyRequests"));
  await assert.rejects(client.list("v1", "Pod"), TooManyRequestsError);
  assert.equal(requests.length, 1);
});

test("HTTP statuses map to our error types, with field causes", async (t) => {
  const { client } = await clientFor(t, (request, response) => {
    if (request.method === "GET") return status(response, 404, "NotFound");
    response.writeHead(422, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        kind: "Status",
        code: 422,
        reason: "Invalid",
        message: "invalid",
        details: { causes: [{ field: "spec.port", message: "must be <= 65535", reason: "FieldValueInvalid" }] },
      }),
    );
  });
  assert.equal(await client.find("v1", "ConfigMap", "x", "a"), undefined);
  await assert.rejects(client.get("v1", "ConfigMap", "x", "a"), NotFoundError);
  const error = await client
    .create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "a" } })
    .catch((e: unknown) => e);
  assert.ok(error instanceof InvalidError);
  assert.deepEqual(error.causes, [{ field: "spec.port", message: "must be <= 65535", reason: "FieldValueInvalid" }]);
});
