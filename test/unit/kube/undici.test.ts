import assert from "node:assert/strict";
import { createServer } from "node:http";
import { once } from "node:events";
import { describe, it } from "node:test";
import { Agent, ProxyAgent } from "../../../kube/undici.ts";

describe("kube/undici: undici's Agent without its index", () => {
  it("a connection pool that makes requests without undici's index being loaded", async () => {
    // A fresh process, so nothing else of the test run has loaded the index before.
    const { execFileSync } = await import("node:child_process");
    const script = `
      import { createRequire } from "node:module";
      const { Agent } = await import(${JSON.stringify(new URL("../../../kube/undici.ts", import.meta.url).href)});
      const index = createRequire(import.meta.url).resolve("undici");
      const loaded = Object.keys(createRequire(import.meta.url).cache).includes(index);
      console.log(JSON.stringify({ loaded, request: typeof new Agent().request }));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    assert.deepEqual(JSON.parse(out), { loaded: false, request: "function" });
  });

  it("the very classes undici's index exports, so an upgrade that moves them fails here", async () => {
    const undici = await import("undici");
    assert.equal(Agent, undici.Agent);
    assert.equal(ProxyAgent, undici.ProxyAgent);
  });

  it("requests through the pool", async () => {
    const server = createServer((_request, response) => response.end("ok"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as { port: number };
    const agent = new Agent();
    try {
      const response = await agent.request({ origin: `http://127.0.0.1:${String(port)}`, path: "/", method: "GET" });
      assert.equal(response.statusCode, 200);
      assert.equal(await response.body.text(), "ok");
    } finally {
      await agent.close();
      server.close();
    }
  });
});
