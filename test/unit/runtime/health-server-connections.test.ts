/**
 * The probe and metrics ports' connection limits (operator/runtime/connection-limits.ts as health-server.ts applies
 * them): the decision alone, then the real server, flooded from one address and from the probe's own.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { describe, it, type TestContext } from "node:test";
import { Registry } from "prom-client";
import { admission, type ConnectionLimits, type HeldConnection } from "../../../operator/runtime/connection-limits.ts";
import { startHealthServer, type HealthServerOptions } from "../../../operator/runtime/health-server.ts";
import type { AccessVerdict } from "../../../operator/runtime/metrics-auth.ts";
import { captureLogger } from "./capture-logger.ts";

describe("connection limits: who makes room for a newcomer", () => {
  const connection = (address: string, since: number, state: Partial<HeldConnection> = {}) => ({
    address,
    since,
    received: false,
    answering: false,
    fresh: false,
    ...state,
  });
  const countByAddress = (held: readonly HeldConnection[]) => {
    const counts = new Map<string, number>();
    for (const c of held) counts.set(c.address, (counts.get(c.address) ?? 0) + 1);
    return counts;
  };
  const decide = (held: readonly HeldConnection[], address: string, limits: ConnectionLimits, nowMs = 10_000) =>
    admission(held, countByAddress(held), address, limits, nowMs);
  const probePort: ConnectionLimits = { max: 6, maxPerAddress: 3, replace: "unanswered", minIdleMs: 0 };

  it("lets a newcomer in under both limits", () => {
    assert.deepEqual(decide([connection("a", 1)], "a", probePort), { admit: true });
  });

  it("at an address's limit replaces that address's connection waiting longest, unfinished or idle", () => {
    const oldest = connection("a", 1, { received: true });
    const held = [connection("a", 5), oldest, connection("a", 3), connection("b", 0)];
    assert.deepEqual(decide(held, "a", probePort), { admit: true, replace: oldest });
  });

  it("never replaces a connection being answered, nor one accepted this turn whose request may not be read yet", () => {
    const answering = connection("a", 1, { answering: true });
    const fresh = connection("a", 2, { fresh: true });
    const waiting = connection("a", 3);
    assert.deepEqual(decide([answering, fresh, waiting], "a", probePort), { admit: true, replace: waiting });
    // Nothing of its own may go: in over its limit while under the ceiling, never in place of another address's
    const busy = [answering, fresh, connection("a", 3, { answering: true })];
    assert.deepEqual(decide(busy, "a", probePort), { admit: true });
    const full = [...busy, connection("b", 0), connection("b", 0), connection("c", 0)];
    assert.deepEqual(decide(full, "a", probePort), { admit: false, reason: "address" });
  });

  it("at the ceiling replaces the connection waiting longest of the address holding the most", () => {
    const bOldest = connection("b", 2);
    const held = [
      connection("a", 0, { answering: true }),
      connection("b", 4),
      bOldest,
      connection("b", 3),
      connection("c", 1),
      connection("c", 1, { answering: true }),
    ];
    assert.deepEqual(decide(held, "d", probePort), { admit: true, replace: bOldest });
    const answering = held.map((c) => ({ ...c, answering: true }));
    assert.deepEqual(decide(answering, "d", probePort), { admit: false, reason: "busy" });
  });

  it("keeps the webhook's rules under replace: idle: refused over an address's limit, received bytes are busy", () => {
    const webhook: ConnectionLimits = { max: 3, maxPerAddress: 2 };
    assert.deepEqual(decide([connection("a", 0), connection("a", 0)], "a", webhook), {
      admit: false,
      reason: "address",
    });
    const idle = connection("b", 5_000);
    const held = [connection("a", 0, { received: true }), connection("a", 0, { received: true }), idle];
    assert.deepEqual(decide(held, "c", webhook), { admit: true, replace: idle });
    // idle for less than its second: not replaced
    assert.deepEqual(decide(held, "c", webhook, 5_500), { admit: false, reason: "busy" });
  });
});

describe("the health server's connections", () => {
  const start = async (t: TestContext, extra: Partial<HealthServerOptions> = {}) => {
    const { logger, lines } = captureLogger();
    const server = await startHealthServer({
      port: 0,
      host: "127.0.0.1",
      registry: new Registry(),
      readiness: [],
      logger,
      ...extra,
    });
    t.after(() => server.close());
    return { port: server.port, lines };
  };
  /** A GET on a connection of its own (as the kubelet's probes), from `localAddress`: its status, or why none. */
  const get = (port: number, path: string, localAddress = "127.0.0.1", timeoutMs = 5_000) =>
    new Promise<string>((resolve) => {
      const req = request({ host: "127.0.0.1", port, path, localAddress, agent: false, timeout: timeoutMs }, (res) => {
        res.resume();
        res.on("end", () => resolve(String(res.statusCode)));
      });
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      req.end();
    });
  /** A connection that sends a request line and never the rest of its headers, as the red team's flood did. */
  const stall = (t: TestContext, port: number, localAddress: string) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress });
    t.after(() => socket.destroy());
    socket.on("error", () => undefined);
    // Reads what comes (the 408), so the server's close is seen.
    socket.on("data", () => undefined);
    socket.on("connect", () => socket.write("GET /healthz HTTP/1.1\r\n"));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    return { socket, closed };
  };
  const until = async (what: string, done: () => boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  it("holds at most 16 from one address, closing its oldest for its newest; another address is served", async (t) => {
    const { port, lines } = await start(t);
    const flood: { socket: Socket; closed: Promise<void> }[] = [];
    for (let i = 0; i < 16; i++) {
      flood.push(stall(t, port, "127.0.0.2"));
      // one at a time: each accepted (the server answered a probe after it) before the next, so their order is known
      await until("connected", () => !flood[i]!.socket.connecting);
      assert.equal(await get(port, "/healthz"), "200");
    }
    const newest = stall(t, port, "127.0.0.2");
    await flood[0]!.closed;
    await until("the replacement was logged", () =>
      lines.some((line) => /closed for a newcomer/.test(line.msg ?? "") && line.address === "127.0.0.2"),
    );
    assert.equal(flood.filter(({ socket }) => socket.destroyed).length, 1, "only the oldest made room for the newest");
    assert.equal(newest.socket.destroyed, false);
    assert.equal(await get(port, "/healthz", "127.0.0.3"), "200");
  });

  it("closes a kept-alive connection idle after its answer for a newcomer of its address", async (t) => {
    const { port } = await start(t);
    /** A connection that sent a whole request, kept alive; resolves once its answer came. */
    const answered = (localAddress: string) =>
      new Promise<{ socket: Socket; closed: Promise<void> }>((resolve) => {
        const socket = connect({ host: "127.0.0.1", port, localAddress });
        t.after(() => socket.destroy());
        socket.on("error", () => undefined);
        const closed = new Promise<void>((done) => socket.once("close", () => done()));
        socket.once("data", () => resolve({ socket, closed }));
        socket.on("connect", () => socket.write("GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n"));
      });
    const kept = [];
    for (let i = 0; i < 16; i++) kept.push(await answered("127.0.0.4"));
    const newcomer = await answered("127.0.0.4");
    await kept[0]!.closed;
    assert.deepEqual(
      kept.map(({ socket }) => socket.destroyed),
      kept.map((_, i) => i === 0),
      "the first idle one made room",
    );
    assert.equal(newcomer.socket.destroyed, false);
  });

  it("answers a probe from the flood's own address, even when the flood brings many more in the same turn", async (t) => {
    const { port } = await start(t);
    for (let round = 0; round < 5; round++) {
      // The probe's connection first, then 40 of the flood's: it becomes the oldest unfinished connection of its
      // address once the flood's older ones are gone, and must be answered before the flood's newcomers replace it.
      const answer = get(port, "/healthz", "127.0.0.1");
      for (let i = 0; i < 40; i++) stall(t, port, "127.0.0.1");
      // (Sockets connect on the next tick; hold the event loop after that, so the kernel completes every handshake
      // before the server accepts any.)
      process.nextTick(() => {
        const until = performance.now() + 50;
        while (performance.now() < until);
      });
      assert.equal(await answer, "200", `round ${round}`);
    }
  });

  it("never closes a connection whose request is being answered", async (t) => {
    let release = () => undefined as void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const authorizeMetrics = async (): Promise<AccessVerdict> => {
      asked++;
      await held;
      return { allowed: true } as AccessVerdict;
    };
    const { port } = await start(t, { authorizeMetrics });
    const scrape = get(port, "/metrics", "127.0.0.1", 30_000);
    await until("the scrape is being answered", () => asked === 1);
    const flood = Array.from({ length: 40 }, () => stall(t, port, "127.0.0.1"));
    await until("the flood's oldest were closed", () => flood.filter(({ socket }) => socket.destroyed).length >= 20);
    release();
    assert.equal(await scrape, "200");
  });

  it("closes a connection that has not sent its headers within seconds, not after Node's 40", async (t) => {
    const { port } = await start(t);
    const started = Date.now();
    const { closed } = stall(t, port, "127.0.0.1");
    const late = new Promise<string>((resolve) => setTimeout(resolve, 15_000, "still open").unref());
    assert.equal(await Promise.race([closed.then(() => "closed"), late]), "closed");
    assert.ok(Date.now() - started >= 1_500, "not before its headers timeout");
  });
});
