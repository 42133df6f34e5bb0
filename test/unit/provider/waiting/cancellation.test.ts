import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

test("the engine's Cancel call, as the dynamic-provider host receives it, aborts every wait", async () => {
  // GIVEN the provider running inside @pulumi/pulumi's dynamic-provider host (its script is the process's argv[1])
  const require = createRequire(import.meta.url);
  const host = require.resolve("@pulumi/pulumi/cmd/dynamic-provider");
  process.argv[1] = host;
  const { cancellation } = await import("../../../../provider/waiting/cancellation.ts");
  const signal = cancellation();
  assert.equal(signal.aborted, false);
  // WHEN grpc-js's server looks up the handler of an incoming Check, then of a Cancel
  const grpc = createRequire(host)("@grpc/grpc-js") as { Server: { prototype: Record<string, unknown> } };
  const retrieve = grpc.Server.prototype["_retrieveHandler"] as (this: unknown, path: string) => unknown;
  const server = { handlers: new Map([["/pulumirpc.ResourceProvider/Cancel", "handler"]]) };
  retrieve.call(server, "/pulumirpc.ResourceProvider/Check");
  assert.equal(signal.aborted, false, "other calls change nothing");
  // THEN the waits' signal aborts, and the host's own handler still answers the call
  assert.equal(retrieve.call(server, "/pulumirpc.ResourceProvider/Cancel"), "handler");
  assert.equal(signal.aborted, true);
});
