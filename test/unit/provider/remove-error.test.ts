/**
 * What a failed delete prints. The dynamic-provider host writes a delete's error as `${e}: ${e.stack}` beside the
 * engine's own report of it: a message for the user (a destroy cancelled while it waits for the finalizer) must
 * appear once there, without the provider's frames; a programming error keeps them. A local HTTP server stands in
 * for the apiserver: one instance being deleted, its finalizer never removed.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { describe, it, type TestContext } from "node:test";
import { standIn } from "./stand-in-apiserver.ts";
import { failForTheUser } from "../../../provider/user-error.ts";

// The provider inside @pulumi/pulumi's dynamic-provider host (its script is argv[1]), where it hears the engine's
// Cancel call: set before the provider's modules load (this file runs in a process of its own).
const host = createRequire(import.meta.url).resolve("@pulumi/pulumi/cmd/dynamic-provider");
process.argv[1] = host;
const { remove } = await import("../../../provider/impl.ts");

const owner = "organization/shop/dev";
const path = "/apis/example.com/v1/namespaces/shop/myappinstances/web-1";

/** The host's own words for a failed delete (cmd/dynamic-provider: `console.error(`${e}: ${e.stack}`)`). */
const printed = (error: Error) => `${String(error)}: ${error.stack}`;

/** An apiserver whose instance web-1 is being deleted and keeps the operator's finalizer; its watch stays open. */
async function apiserver(t: TestContext) {
  const instance = {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: {
      name: "web-1",
      namespace: "shop",
      uid: "u-1",
      generation: 1,
      resourceVersion: "10",
      deletionTimestamp: "2026-01-01T00:00:00Z",
      finalizers: ["myappinstance.finalizer.example.com"],
      annotations: { "myapp.example.com/pulumi-stack": owner, "myapp.example.com/pulumi-resource": "web" },
    },
    spec: { image: "nginx:1.27", replicas: 1, port: 8080 },
    status: {},
  };
  let watching = () => {};
  const watched = new Promise<void>((resolve) => (watching = resolve));
  const server = createServer((request, response) => {
    const answer = (code: number, value: unknown) => {
      response.writeHead(code, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    const url = new URL(request.url ?? "", "http://apiserver");
    if (url.pathname === "/api/v1/namespaces/kube-system") return answer(200, { metadata: { uid: "ks-1" } });
    if (url.pathname === path) return answer(200, instance);
    if (url.pathname === path.slice(0, path.lastIndexOf("/"))) {
      if (url.searchParams.get("watch") === null) {
        return answer(200, { metadata: { resourceVersion: "99" }, items: [instance] });
      }
      response.writeHead(200, { "content-type": "application/json" }); // no event: the finalizer stays
      watching();
      return;
    }
    answer(404, { kind: "Status", code: 404, reason: "NotFound", message: "not found" });
  });
  const { kubeconfig } = await standIn(t, server);
  return { kubeconfig, watched };
}

describe("remove's error, as the host prints it", () => {
  it("a destroy cancelled while it waits for the finalizer: the message once, no stack", async (t) => {
    // GIVEN a destroy of web-1 waiting for the operator's finalizer
    const { kubeconfig, watched } = await apiserver(t);
    const props = {
      name: "web-1",
      namespace: "shop",
      image: "nginx:1.27",
      replicas: 1,
      port: 8080,
      owner,
      logicalName: "web",
      kubeconfig,
      timeoutSeconds: 600,
      uid: "u-1",
      cluster: { server: "x", uid: "ks-1" },
    };
    const removed = remove("shop/web-1", props).then(
      () => assert.fail("the delete should fail"),
      (error: unknown) => error as Error,
    );
    await watched;
    // WHEN the engine cancels the deployment (Ctrl-C): its Cancel call reaches the host's grpc server
    const grpc = createRequire(host)("@grpc/grpc-js") as { Server: { prototype: Record<string, unknown> } };
    const retrieve = grpc.Server.prototype["_retrieveHandler"] as (this: unknown, path: string) => unknown;
    retrieve.call({ handlers: new Map() }, "/pulumirpc.ResourceProvider/Cancel");
    // THEN the delete fails with the message once, without the provider's frames
    const error = await removed;
    const text = printed(error);
    assert.match(text, /stopped waiting for its finalizer because the deployment was cancelled/);
    assert.equal(text.split("because the deployment was cancelled").length, 2, text);
    assert.doesNotMatch(text, /\n\s+at /, text);
  });
});

describe("failForTheUser", () => {
  it("drops the stack of a message for the user, keeps a programming error's", () => {
    const user = new Error("MyAppInstance shop/web-1 is being deleted");
    assert.throws(() => failForTheUser(user));
    assert.equal(user.stack, "");
    for (const bug of [new TypeError("x is undefined"), new RangeError("too deep")]) {
      assert.throws(() => failForTheUser(bug));
      assert.match(bug.stack ?? "", /\n\s+at /);
    }
    // Not an Error at all: rethrown as it is.
    assert.throws(
      () => failForTheUser("text"),
      (thrown) => thrown === "text",
    );
  });
});
