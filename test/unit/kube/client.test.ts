/** kube/client.ts against a local HTTP server: status mapping, retries, credentials, timeouts; kubeconfig parsing. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test, type TestContext } from "node:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Credentials,
  inClusterConfig,
  InvalidError,
  KubeClient,
  loadKubeConfig,
  NotFoundError,
  TooManyRequestsError,
  UnauthorizedError,
} from "../../../kube/index.ts";
import { FakeClock } from "../runtime/fake-clock.ts";

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
  const client = new KubeClient(loadKubeConfig({ kubeconfig }));
  t.after(() => client.close());
  return { client, requests };
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

test("a 429 whose Retry-After outlasts the request's deadline is the answer, not a wait ending in a timeout", async (t) => {
  const { client, requests } = await clientFor(t, (_request, response) =>
    status(response, 429, "TooManyRequests", { "retry-after": "5" }),
  );
  const hurried = new KubeClient(client.config, { requestTimeoutMs: 1_000 });
  t.after(() => hurried.close());
  await assert.rejects(hurried.list("v1", "Pod"), TooManyRequestsError);
  assert.equal(requests.length, 1);
});

test("a throttled watch's wait ends with the caller's abort (a shutdown), and the watch with it", async (t) => {
  const { client, requests } = await clientFor(t, (_request, response) =>
    status(response, 429, "TooManyRequests", { "retry-after": "10" }),
  );
  const shutdown = new AbortController();
  const watched = (async () => {
    for await (const event of client.watch("v1", "Pod", { signal: shutdown.signal })) void event;
  })();
  while (requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
  shutdown.abort();
  await assert.rejects(watched, /abort/i);
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

test("a 401 re-reads a rotated token file and retries once; every request shares one connection", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "kube-token-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, "old\n");
  const seen: string[] = [];
  const sockets = new Set<unknown>();
  const server = createServer((request, response) => {
    sockets.add(request.socket);
    seen.push(request.headers.authorization ?? "");
    if (request.headers.authorization !== "Bearer new") return status(response, 401, "Unauthorized");
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ metadata: {}, items: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const { port } = server.address() as AddressInfo;
  const client = new KubeClient(
    loadKubeConfig({
      kubeconfig: `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]
users: [{name: u, user: {tokenFile: ${tokenFile}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c`,
    }),
  );
  t.after(() => client.close());
  // GIVEN a token that the apiserver no longer accepts, and a kubelet that has since rotated the file
  await assert.rejects(client.list("v1", "Pod"), UnauthorizedError);
  writeFileSync(tokenFile, "new\n");
  // WHEN the next requests run
  await client.list("v1", "Pod");
  await client.list("v1", "Pod");
  // THEN the 401 made it read the file again and retry, and the cached token serves the next request
  assert.deepEqual(seen, ["Bearer old", "Bearer old", "Bearer old", "Bearer new", "Bearer new"]);
  // (undici may open a second connection when a request starts before the previous one's socket is released)
  assert.ok(sockets.size <= 2, `keep-alive connections are reused (${sockets.size} for 5 requests)`);
});

test("a request that gets no answer times out as a TransportError; a watch does not", async (t) => {
  const { client } = await clientFor(t, () => {
    /* never answers */
  });
  const slow = new KubeClient(client.config, { requestTimeoutMs: 200 });
  t.after(() => slow.close());
  await assert.rejects(slow.get("v1", "ConfigMap", "x", "a"), /no answer within 200 ms/);
});

test("a watch reads a 4 MiB event line in one pass, and the events around it", async (t) => {
  // GIVEN a watch answered with a 4 MiB object (a tenant's, near the apiserver's limits) between two small events,
  // written in 16 KiB pieces that cut its multi-byte characters
  const big = {
    type: "MODIFIED",
    object: { metadata: { name: "big", labels: { note: "✓😀".repeat(600_000) } } },
  };
  const bookmark = { type: "BOOKMARK", object: { metadata: { resourceVersion: "7" } } };
  const added = { type: "ADDED", object: { metadata: { name: "small" } } };
  const body = Buffer.from(`${JSON.stringify(added)}\n${JSON.stringify(big)}\r\n\n${JSON.stringify(bookmark)}\n`);
  const { client } = await clientFor(t, (_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    for (let from = 0; from < body.length; from += 16384) response.write(body.subarray(from, from + 16384));
    response.end();
  });
  // WHEN it is read, counting the characters searched for newlines (work, not time: the machine is shared)
  const { indexOf } = String.prototype;
  let scanned = 0;
  String.prototype.indexOf = function (this: string, search: string, position?: number): number {
    const found = indexOf.call(this, search, position);
    if (search === "\n") scanned += (found === -1 ? this.length : found + 1) - (position ?? 0);
    return found;
  };
  const events: unknown[] = [];
  try {
    for await (const event of client.watch("v1", "ConfigMap", { namespace: "a" })) events.push(event);
  } finally {
    String.prototype.indexOf = indexOf;
  }
  // THEN every event arrives whole, and each character was searched about once: searching all that is buffered on
  // every chunk would read the long line once per chunk of it, hundreds of times
  assert.deepEqual(events, [added, big, bookmark]);
  assert.ok(scanned < 2 * body.length, `${scanned} characters searched for a body of ${body.length} bytes`);
});

test("in-cluster config: the apiserver from the service env, the ServiceAccount's CA, token file and namespace", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "kube-sa-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "token"), "abc");
  writeFileSync(join(dir, "namespace"), "myapp-system\n");
  const kc = inClusterConfig({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }, dir);
  assert.deepEqual(kc.getCurrentCluster(), {
    name: "in-cluster",
    server: "https://[fd00::1]:443",
    caFile: join(dir, "ca.crt"),
    skipTLSVerify: false,
  });
  assert.deepEqual(kc.getCurrentUser(), { name: "in-cluster", tokenFile: join(dir, "token") });
  assert.equal(kc.getContextObject("in-cluster")?.namespace, "myapp-system");
});

test("kubeconfig: relative paths resolve against the file, auth-provider is refused by name", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "kube-config-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "config");
  writeFileSync(
    path,
    `clusters: [{name: c, cluster: {server: "https://k:6443", certificate-authority: ca.crt, tls-server-name: kubernetes}}]
users: [{name: u, user: {client-certificate: certs/u.crt, client-key: /abs/u.key}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: ns}}]
current-context: c`,
  );
  const kc = loadKubeConfig({ path });
  assert.equal(kc.getCurrentCluster()?.caFile, join(dir, "ca.crt"));
  assert.equal(kc.getCurrentCluster()?.tlsServerName, "kubernetes");
  assert.equal(kc.getCurrentUser()?.certFile, join(dir, "certs/u.crt"));
  assert.equal(kc.getCurrentUser()?.keyFile, "/abs/u.key");
  assert.throws(
    () =>
      loadKubeConfig({
        kubeconfig: `clusters: [{name: c, cluster: {server: "https://k"}}]
users: [{name: g, user: {auth-provider: {name: gcp}}}]
contexts: [{name: c, context: {cluster: c, user: g}}]
current-context: c`,
      }),
    /user "g" uses an auth-provider plugin.*exec plugin/,
  );
});

test("an exec plugin's token is cached until it expires", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "kube-exec-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const counter = join(dir, "runs");
  const plugin = join(dir, "plugin.sh");
  writeFileSync(
    plugin,
    `#!/bin/sh\necho x >> ${counter}\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t1","expirationTimestamp":"2999-01-01T00:00:00Z"}}'\n`,
    { mode: 0o755 },
  );
  const credentials = new Credentials({
    name: "u",
    exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, args: [], env: [] },
  });
  assert.equal(await credentials.authorization(), "Bearer t1");
  assert.equal(await credentials.authorization(), "Bearer t1");
  assert.equal(readFileSync(counter, "utf8").trim().split("\n").length, 1, "the plugin ran once");
  credentials.invalidate();
  await credentials.authorization();
  assert.equal(readFileSync(counter, "utf8").trim().split("\n").length, 2, "invalidate (a 401) runs it again");
});

test("a token file is re-read once a minute, so a rotated projected token is picked up without a 401", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "kube-rotate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, "one\n");
  const clock = new FakeClock();
  const credentials = new Credentials({ name: "sa", tokenFile }, { clock });
  assert.equal(await credentials.authorization(), "Bearer one");
  writeFileSync(tokenFile, "two\n");
  await clock.advance(59_000);
  clock.jumpWall(3_600_000);
  assert.equal(await credentials.authorization(), "Bearer one", "cached within the minute, whatever the wall clock");
  await clock.advance(1_000);
  assert.equal(await credentials.authorization(), "Bearer two");
});

test("an exec plugin's token is run again 30 s before its expirationTimestamp, by the wall clock", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "kube-exec-expiry-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const counter = join(dir, "runs");
  const plugin = join(dir, "plugin.sh");
  const clock = new FakeClock();
  const expires = new Date(clock.wallTimeMs() + 60_000).toISOString();
  writeFileSync(
    plugin,
    `#!/bin/sh\necho x >> ${counter}\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t1","expirationTimestamp":"${expires}"}}'\n`,
    { mode: 0o755 },
  );
  const runs = () => readFileSync(counter, "utf8").trim().split("\n").length;
  const exec = { apiVersion: "client.authentication.k8s.io/v1", command: plugin, args: [], env: [] };
  const credentials = new Credentials({ name: "u", exec }, { clock });
  await credentials.authorization();
  clock.jumpWall(29_999);
  await credentials.authorization();
  assert.equal(runs(), 1, "cached until 30 s before it expires");
  clock.jumpWall(1);
  await credentials.authorization();
  assert.equal(runs(), 2, "the expiry is a time of day: the wall clock reaching it renews the token");
});

test("listEach reads a list item by item as it arrives, each as `each` makes it", async (t) => {
  const items = Array.from({ length: 50 }, (_, i) => ({
    metadata: { name: `cm-${i}`, namespace: "n", resourceVersion: String(i) },
    data: { blob: "x".repeat(10_000), quote: 'a "} ]' },
  }));
  const { client, requests } = await clientFor(t, (_request, response) => {
    // Sent in small pieces, so items span many chunks.
    const text = JSON.stringify({
      kind: "ConfigMapList",
      metadata: { resourceVersion: "99", continue: "next" },
      items,
    });
    response.writeHead(200, { "content-type": "application/json" });
    for (let from = 0; from < text.length; from += 4096) response.write(text.slice(from, from + 4096));
    response.end();
  });
  const seen: string[] = [];
  const list = await client.listEach("v1", "ConfigMap", { namespace: "n", limit: 500 }, (item) => {
    seen.push(`${item.apiVersion}/${item.kind}/${item.metadata.name ?? ""}`);
    return item.metadata.name;
  });
  assert.deepEqual(list.metadata, { resourceVersion: "99", continue: "next" });
  assert.deepEqual(
    list.items,
    items.map((item) => item.metadata.name),
  );
  assert.equal(seen[0], "v1/ConfigMap/cm-0", "items get the apiVersion and kind a list leaves out");
  assert.deepEqual(requests, ["GET /api/v1/namespaces/n/configmaps?limit=500"]);
});

test("listEach: a cut-off list is a transport error, an error status the usual one", async (t) => {
  let calls = 0;
  const { client } = await clientFor(t, (_request, response) => {
    calls += 1;
    if (calls === 2) return status(response, 404, "NotFound");
    response.writeHead(200, { "content-type": "application/json" });
    response.end('{"metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a"}}');
  });
  await assert.rejects(
    client.listEach("v1", "ConfigMap", {}, (item) => item),
    /list configmaps: .*ended inside/,
  );
  await assert.rejects(
    client.listEach("v1", "ConfigMap", {}, (item) => item),
    NotFoundError,
  );
});

test("listEach: an item longer than maxItemChars is counted, not parsed; what `each` throws ends the read as it is", async (t) => {
  const items = [
    { metadata: { name: "small" }, message: "a line" },
    { metadata: { name: "forged" }, message: "x".repeat(10_000) },
    { metadata: { name: "also-small" }, message: "another" },
  ];
  const { client } = await clientFor(t, (_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ kind: "EventList", metadata: { resourceVersion: "5" }, items }));
  });
  const lengths: number[] = [];
  const list = await client.listEach(
    "v1",
    "Event",
    {},
    (item, textLength) => {
      lengths.push(textLength);
      return item.metadata.name;
    },
    { maxItemChars: 1_000 },
  );
  assert.deepEqual(list.items, ["small", "also-small"]);
  assert.equal(list.oversized, 1);
  assert.deepEqual(lengths, [JSON.stringify(items[0]).length, JSON.stringify(items[2]).length]);

  class Enough extends Error {}
  await assert.rejects(
    client.listEach("v1", "Event", {}, () => {
      throw new Enough("the caller's own limit");
    }),
    (error: unknown) => error instanceof Enough,
  );
});

test("a script whose only work is a throttled request waits out the Retry-After instead of ending mid-request", async (t) => {
  let calls = 0;
  const { client } = await clientFor(t, (_request, response) => {
    calls += 1;
    if (calls === 1) return status(response, 429, "TooManyRequests", { "retry-after": "1" });
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "a" } }));
  });
  const server = client.config.getCurrentCluster()?.server ?? "";
  const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c`;
  const script = [
    `import { KubeClient, loadKubeConfig } from ${JSON.stringify(new URL("../../../kube/index.ts", import.meta.url).href)};`,
    `const client = new KubeClient(loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} }));`,
    'const found = await client.get("v1", "ConfigMap", "x", "a");',
    "console.log(`got ${found.metadata.name}`);",
    "await client.close();",
  ].join("\n");
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.equal(code, 0, output);
  assert.equal(output, "got x\n");
  assert.equal(calls, 2);
});
