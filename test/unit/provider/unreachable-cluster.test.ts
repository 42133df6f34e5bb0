/**
 * A preview against a cluster that does not answer fails once and fast, naming the cluster: the first instance
 * finds out, every later instance on the same connection fails at once instead of waiting out its own connect
 * timeout. A local TCP server that drops every connection stands in for the cluster, and counts the attempts; an
 * HTTP server stands in for a cluster that answers slowly, or that must not be asked.
 */
import assert from "node:assert/strict";
import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { createServer, type Socket } from "node:net";
import { test } from "node:test";
import { stringify } from "yaml";
import { check, diff } from "../../../provider/impl.ts";
import { unknownValue } from "../../../provider/inputs.ts";
import { kubeconfigFor, standIn } from "./stand-in-apiserver.ts";

test("check and diff: the first instance finds the cluster silent, the others fail at once without asking", async (t) => {
  let attempts = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    attempts += 1;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as { port: number };
  const url = `https://127.0.0.1:${port}`;
  const kubeconfig = kubeconfigFor(url, { name: "silent", insecure: true });
  const instance = (logicalName: string) => ({
    image: "nginx:1.27",
    owner: "organization/shop/dev",
    logicalName,
    namespace: "shop",
    kubeconfig,
  });

  const first = await check({}, instance("web"));
  assert.match(first.failures?.[0]?.reason ?? "", new RegExp(`cannot reach the cluster at ${url}`));
  const asked = attempts;
  assert.ok(asked > 0, "the first instance asked the cluster");

  const second = await check({}, instance("db"));
  assert.match(second.failures?.[0]?.reason ?? "", new RegExp(`cannot reach the cluster at ${url}`));
  // An instance in state whose connection is silent: its diff fails at once too.
  const olds = { ...(first.inputs as Record<string, unknown>), cluster: { server: url, uid: "u-1" } };
  await assert.rejects(
    diff("shop/web", olds, { ...(first.inputs as Record<string, unknown>) }),
    /cannot reach the cluster/,
  );
  assert.equal(attempts, asked, "no later instance asked again");
});

test("diff: credentials that cannot be loaded (a context the kubeconfig lacks) fail the preview, naming it", async () => {
  const kubeconfig = stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
    users: [{ name: "u", user: { token: "t" } }],
    contexts: [{ name: "kwok-myapp", context: { cluster: "c", user: "u" } }],
    "current-context": "kwok-myapp",
  });
  const inputs = { image: "nginx:1.27", owner: "o/shop/dev", logicalName: "web", namespace: "shop", kubeconfig };
  const olds = { ...inputs, cluster: { server: "https://127.0.0.1:1", uid: "u-1" } };
  await assert.rejects(
    diff("shop/web", olds, { ...inputs, context: "wrongctx" }),
    /^Error: web: Cannot load cluster credentials from the kubeconfig input: .*"wrongctx"/,
  );
});

test("check: an apiserver that answers but whose dry-run outlasts 5 s is slow, not gone: a note, no failure", async (t) => {
  // GIVEN an apiserver that answers reads at once and holds every dry-run for 6 s (two slow webhooks)
  const held = new Set<ServerResponse>();
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const answer = () => {
        response.writeHead(request.method === "GET" ? 404 : 200, { "content-type": "application/json" });
        response.end(JSON.stringify({ kind: "Status", code: 404, reason: "NotFound", message: "not found" }));
      };
      if (request.method === "GET") return answer();
      held.add(response);
      setTimeout(answer, 6_000).unref();
    });
  });
  const { kubeconfig } = await standIn(t, server);
  const instance = (logicalName: string) => ({
    image: "nginx:1.27",
    owner: "organization/shop/dev",
    logicalName,
    namespace: "shop",
    kubeconfig,
  });
  // WHEN two instances are checked THEN neither fails: the zod verdict stands, the dry-run is skipped with a note
  assert.deepEqual((await check({}, instance("web"))).failures, undefined);
  assert.deepEqual((await check({}, instance("db"))).failures, undefined);
  // AND only the first waited for its dry-run: the second skips it at once with the same note
  assert.equal(held.size, 1, "one dry-run asked for");
});

test("check: an unknown inside an object input asks the cluster nothing (it would dry-run the placeholder)", async (t) => {
  let requests = 0;
  const server = createHttpServer((_request, response) => {
    requests += 1;
    response.writeHead(500).end();
  });
  const { kubeconfig } = await standIn(t, server);
  const result = await check(
    {},
    {
      image: "nginx:1.27",
      owner: "organization/shop/dev",
      logicalName: "web",
      namespace: "shop",
      kubeconfig,
      resources: { limits: { memory: unknownValue } },
    },
  );
  assert.equal(result.failures, undefined);
  assert.equal(requests, 0);
});
