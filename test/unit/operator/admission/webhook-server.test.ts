import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { Agent, request } from "node:https";
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { test, type TestContext } from "node:test";
import { pino } from "pino";
import {
  createCertificateAuthority,
  createServingCertificate,
  type CertificatePair,
} from "../../../../operator/admission/certificates.ts";
import {
  startWebhookServer,
  WebhookRequestError,
  type WebhookServerOptions,
} from "../../../../operator/admission/webhook-server.ts";

const logger = pino({ level: "silent" });
const hour = 3_600_000;

async function issue(): Promise<{ ca: CertificatePair; serving: CertificatePair }> {
  const ca = await createCertificateAuthority({ validityMs: hour, nowMs: Date.now() });
  const serving = await createServingCertificate({
    ca,
    hosts: ["localhost", "127.0.0.1"],
    validityMs: hour,
    nowMs: Date.now(),
  });
  return { ca, serving };
}

interface Answer {
  readonly status: number;
  readonly body: string;
  /** SHA-256 fingerprint of the certificate the server presented on this request's connection. */
  readonly fingerprint: string;
}

/** The certificate each connection's handshake presented (read at the handshake: Node may drop it later). */
const presented = new WeakMap<TLSSocket, string>();
const peerFingerprint = (socket: TLSSocket) => socket.getPeerX509Certificate()?.fingerprint256 ?? "";

function post(
  port: number,
  path: string,
  body: string | Buffer,
  options: { ca: string; agent?: Agent },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        ca: options.ca,
        agent: options.agent ?? false,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        // Read now: a kept-alive socket goes back to its agent (res.socket null) once the body ended.
        const fingerprint = presented.get(res.socket as TLSSocket) ?? "";
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), fingerprint });
        });
      },
    );
    req.on("socket", (socket: TLSSocket) => {
      if (!presented.has(socket)) socket.once("secureConnect", () => presented.set(socket, peerFingerprint(socket)));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function start(t: TestContext, tls: CertificatePair, overrides: Partial<WebhookServerOptions> = {}) {
  const server = await startWebhookServer({
    host: "127.0.0.1",
    port: 0,
    tls,
    logger,
    routes: {
      "/validate": async (body) => ({ echoed: body }),
      "/malformed": async () => {
        throw new WebhookRequestError(400, "request.uid: missing");
      },
      "/broken": async () => {
        throw new Error("bug");
      },
      "/slow": () => new Promise(() => undefined),
    },
    ...overrides,
  });
  t.after(() => server.close({ graceMs: 0 }));
  return server;
}

test("a POST is answered with the handler's value as JSON; the apiserver's timeout query is ignored", async (t) => {
  const { ca, serving } = await issue();
  const server = await start(t, serving);
  const answer = await post(server.port, "/validate?timeout=10s", JSON.stringify({ uid: "1" }), { ca: ca.cert });
  assert.equal(answer.status, 200);
  assert.deepEqual(JSON.parse(answer.body), { echoed: { uid: "1" } });
});

test("unknown paths, other methods, non-JSON, oversized bodies, refusals, bugs and hung handlers get their status", async (t) => {
  const { ca, serving } = await issue();
  const server = await start(t, serving, { maxBodyBytes: 1024, handlerTimeoutMs: 200 });
  const send = (path: string, body: string | Buffer) => post(server.port, path, body, { ca: ca.cert });
  assert.equal((await send("/nope", "{}")).status, 404);
  assert.equal((await send("/validate", "not json")).status, 400);
  const big = await send("/validate", Buffer.alloc(4096, 0x20));
  assert.equal(big.status, 413);
  assert.match(big.body, /larger than 1024 bytes/);
  const refused = await send("/malformed", "{}");
  assert.deepEqual([refused.status, refused.body], [400, "request.uid: missing\n"]);
  assert.equal((await send("/broken", "{}")).status, 500);
  assert.equal((await send("/slow", "{}")).status, 504);
  const get = await new Promise<number>((resolve, reject) => {
    request({ host: "127.0.0.1", port: server.port, path: "/validate", ca: ca.cert, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on("error", reject)
      .end();
  });
  assert.equal(get, 405);
});

test("a body of at least parseLarge.fromBytes is parsed by it, not on the event loop; its SyntaxError is a 400", async (t) => {
  const { ca, serving } = await issue();
  const handed: number[] = [];
  const server = await start(t, serving, {
    parseLarge: {
      fromBytes: 1024,
      parse: (body) => {
        handed.push(body.byteLength);
        if (body.includes("broken")) return Promise.reject(new SyntaxError("broken on the thread"));
        return Promise.resolve({ parsedElsewhere: true });
      },
    },
  });
  const send = (body: string) => post(server.port, "/validate", body, { ca: ca.cert });
  const small = await send(JSON.stringify({ uid: "1" }));
  assert.deepEqual(JSON.parse(small.body), { echoed: { uid: "1" } });
  const large = JSON.stringify({ uid: "2", pad: "x".repeat(2000) });
  assert.deepEqual(JSON.parse((await send(large)).body), { echoed: { parsedElsewhere: true } });
  const broken = await send(`broken${" ".repeat(2000)}`);
  assert.deepEqual([broken.status, broken.body], [400, "request body is not JSON: broken on the thread\n"]);
  assert.deepEqual(handed, [Buffer.byteLength(large), 2006]);
});

test("request bytes held at once are bounded: beyond them a request gets 503, and the bytes come back", async (t) => {
  // Anyone on the pod network can reach the port: many large bodies at once must not take the operator's memory.
  const { ca, serving } = await issue();
  let entered!: () => void;
  const inHandler = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const server = await start(t, serving, {
    maxBodyBytes: 64 * 1024,
    maxBufferedBytes: 100 * 1024,
    routes: {
      "/validate": async () => ({ ok: true }),
      "/hold": async () => {
        entered();
        await gate;
        return { held: true };
      },
    },
  });
  const body = JSON.stringify({ pad: "x".repeat(60 * 1024) });
  const send = (path: string) => post(server.port, path, body, { ca: ca.cert });
  // GIVEN a request whose 60 KiB are held while its handler runs
  const held = send("/hold");
  await inHandler;
  // WHEN another 60 KiB arrive: 120 KiB would be held, over the 100 KiB budget
  const refused = await send("/validate");
  assert.deepEqual([refused.status, refused.body], [503, "too many request bytes in flight; retry\n"]);
  // THEN once the first is answered its bytes are given back, and the same request is served
  release();
  assert.equal((await held).status, 200);
  assert.equal((await send("/validate")).status, 200);
  assert.equal((await send("/validate")).status, 200, "a refused body's bytes were given back too");
});

test("at the ceiling a newcomer replaces an idle connection of the largest idle holder, never one carrying a request", async (t) => {
  const { ca, serving } = await issue();
  // Requests the server has begun, to wait on (not sleep) until it saw each one.
  let begun = 0;
  const metrics = { started: () => void begun++, finished: () => undefined };
  const server = await start(t, serving, { maxConnections: 4, minIdleMsToReplace: 0, metrics });
  const sockets: TLSSocket[] = [];
  t.after(() => sockets.forEach((socket) => socket.destroy()));
  const until = async (what: string, done: () => boolean) => {
    const deadline = Date.now() + 30_000;
    while (!done()) {
      assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  /** A TLS connection from `localAddress`, or the error that ended it before its handshake. */
  const open = (localAddress: string) =>
    new Promise<TLSSocket | Error>((resolve) => {
      const raw = netConnect({ host: "127.0.0.1", port: server.port, localAddress });
      const socket = tlsConnect({ socket: raw, host: "127.0.0.1", ca: ca.cert });
      sockets.push(socket);
      socket.once("secureConnect", () => resolve(socket));
      socket.once("error", (error) => resolve(error));
      socket.once("close", () => resolve(new Error("closed before the handshake")));
    });
  const connected = async (localAddress: string) => {
    const socket = await open(localAddress);
    assert.ok(!(socket instanceof Error), `connected from ${localAddress}: ${String(socket)}`);
    return socket;
  };
  const head = "Host: webhook\r\nContent-Type: application/json\r\nContent-Length: 2\r\n";
  /** Sends a POST on `socket`; resolves with the status line once an answer starts, or CLOSED. */
  const send = (socket: TLSSocket, path: string) => {
    socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n{}`);
    return answer(socket);
  };
  const answer = (socket: TLSSocket) =>
    new Promise<string>((resolve) => {
      socket.once("data", (chunk: Buffer) => resolve(chunk.toString().split("\r\n")[0] ?? ""));
      socket.once("close", () => resolve("CLOSED"));
    });
  // GIVEN the ceiling held by one pod's two connections, idle after a request each, and two of the apiserver's
  // address: one idle after a request, one with a request in flight
  const parked = [await connected("127.0.0.2"), await connected("127.0.0.2")];
  for (const socket of parked) assert.equal(await send(socket, "/validate"), "HTTP/1.1 200 OK");
  const kept = await connected("127.0.0.1");
  assert.equal(await send(kept, "/validate"), "HTTP/1.1 200 OK");
  const busy = await connected("127.0.0.1");
  void send(busy, "/slow");
  await until("the slow request began", () => begun === 4);
  // WHEN the apiserver's address opens another, THEN it is served, in place of the pod's longest idle connection
  const newcomer = await connected("127.0.0.1");
  assert.equal(await send(newcomer, "/validate"), "HTTP/1.1 200 OK");
  await until("the pod's first connection closed", () => parked[0]?.destroyed === true);
  assert.equal(parked[1]?.destroyed, false, "only one connection made room");
  // AND a connection whose next request is on its way (half its headers sent) is never taken for idle
  kept.write("POST /validate HTTP/1.1\r\nHost: webhook\r\n");
  const keptAnswer = answer(kept);
  // (a round trip on another connection, sent after those bytes: the server has read them by its answer)
  assert.equal(await send(newcomer, "/validate"), "HTTP/1.1 200 OK");
  const second = await connected("127.0.0.3");
  await until("the pod's second connection closed", () => parked[1]?.destroyed === true);
  assert.equal(kept.destroyed, false);
  kept.write("Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  assert.equal(await keptAnswer, "HTTP/1.1 200 OK");
  // AND with no connection idle, a newcomer is closed instead
  const before = begun;
  for (const socket of [newcomer, second, kept]) void send(socket, "/slow");
  await until("every connection carries a request", () => begun === before + 3);
  assert.ok((await open("127.0.0.4")) instanceof Error, "closed: nothing idle to replace");
});

test("one address cannot take every connection, and a silent one is dropped before its handshake", async (t) => {
  const { ca, serving } = await issue();
  const server = await start(t, serving, { maxConnections: 10, maxConnectionsPerAddress: 2 });
  // Raw TCP connections that never start TLS, as a flood would hold them.
  const silent = (localAddress: string) =>
    new Promise<{ socket: Socket; closed: Promise<void> }>((resolve, reject) => {
      const socket = netConnect({ host: "127.0.0.1", port: server.port, localAddress });
      const closed = new Promise<void>((done) => socket.once("close", () => done()));
      socket.once("connect", () => resolve({ socket, closed }));
      socket.once("error", reject);
    });
  const held = [await silent("127.0.0.1"), await silent("127.0.0.1")];
  t.after(() => held.forEach(({ socket }) => socket.destroy()));
  // WHEN the same address opens a third, THEN it is closed at once; another address is still served
  const third = await silent("127.0.0.1");
  await third.closed;
  const other = await new Promise<TLSSocket | Error>((resolve) => {
    const raw = netConnect({ host: "127.0.0.1", port: server.port, localAddress: "127.0.0.2" });
    const socket = tlsConnect({ socket: raw, host: "127.0.0.1", ca: ca.cert });
    socket.once("secureConnect", () => resolve(socket));
    socket.once("error", (error) => resolve(error));
  });
  assert.ok(!(other instanceof Error), `another address is served: ${String(other)}`);
  (other as TLSSocket).destroy();
  // AND the silent ones are dropped by the server once the handshake's 5 s are up (not after Node's 120 s)
  const dropped = Promise.all(held.map(({ closed }) => closed)).then(() => "dropped");
  const deadline = new Promise((resolve) => setTimeout(resolve, 60_000, "still open after 60 s").unref());
  assert.equal(await Promise.race([dropped, deadline]), "dropped");
});

test("reports every request by route and status, bugs included, and none is left in flight", async (t) => {
  const finished: [string, number][] = [];
  let inFlight = 0;
  const metrics = {
    started: () => void inFlight++,
    finished: (route: string, status: number, seconds: number) => {
      inFlight--;
      assert.ok(seconds >= 0 && seconds < 60, String(seconds));
      finished.push([route, status]);
    },
  };
  const { ca, serving } = await issue();
  const server = await start(t, serving, { metrics });
  const send = (path: string) => post(server.port, path, "{}", { ca: ca.cert });
  for (const path of ["/validate", "/malformed", "/broken", "/scan/../etc"]) await send(path);
  assert.deepEqual(finished, [
    ["/validate", 200],
    ["/malformed", 400],
    ["/broken", 500],
    // Any unknown path is one series: a scanner cannot grow the metrics.
    ["other", 404],
  ]);
  assert.equal(inFlight, 0);
});

test("a reload serves the new certificate on new handshakes and keeps open connections serving", async (t) => {
  // GIVEN a server with certificate A, and a keep-alive connection that has used it
  const a = await issue();
  const b = await issue();
  const bothCas = `${a.ca.cert}${b.ca.cert}`;
  const server = await start(t, a.serving);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const before = await post(server.port, "/validate", "{}", { ca: bothCas, agent });
  assert.equal(before.fingerprint, new X509Certificate(a.serving.cert).fingerprint256);

  // WHEN the certificate is swapped for B
  server.reload(b.serving);

  // THEN the open connection keeps answering (with A, as negotiated), and a new connection gets B
  const reused = await post(server.port, "/validate", "{}", { ca: bothCas, agent });
  assert.equal(reused.status, 200);
  assert.equal(reused.fingerprint, before.fingerprint, "the kept-alive connection was not dropped");
  const fresh = await post(server.port, "/validate", "{}", { ca: bothCas });
  assert.equal(fresh.fingerprint, new X509Certificate(b.serving.cert).fingerprint256);
  // AND a client that trusts only A's CA now fails the handshake on a new connection: the swap is real
  await assert.rejects(
    post(server.port, "/validate", "{}", { ca: a.ca.cert }),
    /self-signed|unable to verify|certificate/i,
  );
});

test("requests running while the certificate is swapped repeatedly all succeed", async (t) => {
  // GIVEN a client trusting both CAs, sending requests back to back on new and kept-alive connections
  const a = await issue();
  const b = await issue();
  const ca = `${a.ca.cert}${b.ca.cert}`;
  const server = await start(t, a.serving);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  t.after(() => agent.destroy());
  let stop = false;
  const statuses: number[] = [];
  let answered: () => void = () => undefined;
  const loop = async (useAgent: boolean) => {
    while (!stop) {
      statuses.push((await post(server.port, "/validate", "{}", { ca, ...(useAgent ? { agent } : {}) })).status);
      answered();
    }
  };
  const loops = Promise.all([loop(true), loop(true), loop(false), loop(false)]);
  // A loop that fails ends the wait with its error instead of leaving it waiting for answers that never come.
  const failed = loops.then(() => new Promise<never>(() => undefined));
  /** Resolves once `count` requests have been answered; fails after a generous deadline. */
  const answeredCount = async (count: number, what: string) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no request answered ${what} within 60 s`)), 60_000);
    });
    const counted = new Promise<void>((resolve) => {
      const check = () => (statuses.length >= count ? resolve() : (answered = check));
      check();
    });
    try {
      await Promise.race([failed, deadline, counted]);
    } finally {
      clearTimeout(timer);
    }
  };
  // WHEN the certificate flips 20 times, each time once 4 more requests were answered
  await answeredCount(4, "before the first flip");
  for (let flip = 1; flip <= 20; flip++) {
    server.reload(flip % 2 === 1 ? b.serving : a.serving);
    // THEN requests are answered after each flip
    await answeredCount(statuses.length + 4, `after flip ${flip}`);
  }
  stop = true;
  await loops;
  // AND every one of them with 200
  assert.deepEqual([...new Set(statuses)], [200]);
});

test("close lets a request in flight finish", async (t) => {
  const { ca, serving } = await issue();
  let arrived!: () => void;
  const inHandler = new Promise<void>((resolve) => (arrived = resolve));
  let release: () => void = () => undefined;
  const server = await start(t, serving, {
    routes: {
      "/validate": () =>
        new Promise((resolve) => {
          release = () => resolve({ ok: true });
          arrived();
        }),
    },
  });
  const inFlight = post(server.port, "/validate", "{}", { ca: ca.cert });
  // GIVEN the request is in its handler
  await inHandler;
  const closing = server.close({ graceMs: 5_000 });
  release();
  assert.equal((await inFlight).status, 200);
  await closing;
});
