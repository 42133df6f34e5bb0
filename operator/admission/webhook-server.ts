/**
 * The HTTPS server the apiserver calls for admission: `POST <path>` with a JSON body → the route's handler → its
 * answer as JSON. Its certificate is swapped in place with `server.setSecureContext()`: new handshakes get the new
 * certificate, connections already open keep theirs, nothing is restarted or dropped. It runs on every replica
 * (admission is not the leader's job: a standby answers as well as the leader).
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Server as NetServer, type AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { realClock } from "../../kube/index.ts";
import { listenError } from "../runtime/health-server.ts";
import type { CertificatePair } from "./certificates.ts";
import { limitConnections } from "../runtime/connection-limits.ts";

/** Answers one request body (already parsed JSON); the value it resolves to is sent back as JSON with status 200. */
export type WebhookHandler = (body: unknown) => Promise<unknown>;

/**
 * Thrown by a handler for a request it cannot answer (a malformed AdmissionReview): the server replies `status`
 * (4xx) with the message as plain text, and logs it at warn instead of error. Anything else a handler throws is a
 * 500 and logged as an error.
 */
export class WebhookRequestError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "WebhookRequestError";
    this.status = status;
  }
}

/** What the server reports per request (controller_runtime_webhook_* in operator/runtime/metrics.ts). */
export interface WebhookServerMetrics {
  started(path: string): void;
  finished(path: string, status: number, seconds: number): void;
}

export interface WebhookServerOptions {
  /** The address to bind; "0.0.0.0" in a pod, "127.0.0.1" for an apiserver on the same machine. */
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** The serving certificate (tls.crt, may carry the chain) and its key, PEM. */
  readonly tls: CertificatePair;
  /** The setting that chose the address (`--webhook-bind-address`): what a failure to listen names. */
  readonly flag?: string;
  /** Path → handler, e.g. `{ "/validate": ..., "/mutate": ... }`; the apiserver's `?timeout=10s` query is ignored. */
  readonly routes: Readonly<Record<string, WebhookHandler>>;
  readonly logger: Logger;
  /** A larger body is refused with 413. @default 3 MiB, the apiserver's own limit on an admission request */
  readonly maxBodyBytes?: number;
  /**
   * Request bytes held at once, across every request: beyond it a request gets 503 and its connection is closed.
   * Anyone on the pod network can reach the port, and without this 100 connections each sending 3 MiB slowly held
   * 315 MiB of the operator's memory (1,000 would end it, for every tenant). The apiserver's requests are a few
   * KiB. @default 32 MiB
   */
  readonly maxBufferedBytes?: number;
  /**
   * Connections open at once. Each open TLS connection costs ~66 KiB even idle, so without a ceiling connections
   * alone could exhaust the operator's memory. At the ceiling a newcomer replaces an idle connection of the address
   * holding the most, and is closed only when all are busy (connection-limits.ts). The apiserver keeps a few per
   * replica, at most one per admission request in flight (its default in-flight limit is 200 writes). @default 1000
   */
  readonly maxConnections?: number;
  /**
   * Connections open at once from one address; more from it are closed as they come, so one pod holding idle or
   * half-open connections cannot take all of {@link maxConnections} and shut admission for every tenant. Above
   * what one apiserver opens (one per write in flight, at most its 200 by default). @default 256
   */
  readonly maxConnectionsPerAddress?: number;
  /** At the ceiling, a connection idle this long may make room for a newcomer. @default 1000 */
  readonly minIdleMsToReplace?: number;
  /**
   * A handler that has not answered after this long gets a 504. The apiserver gives up after the webhook's
   * timeoutSeconds (at most 30 s) anyway; this bounds the work left behind. @default 30_000
   */
  readonly handlerTimeoutMs?: number;
  /**
   * Bodies of at least `fromBytes` are parsed by `parse` instead of `JSON.parse` on the event loop (which a few
   * large bodies a second could keep busy: review-parse-thread.ts). A SyntaxError it throws is a 400.
   * @default every body parsed here
   */
  readonly parseLarge?: LargeBodyParser;
  readonly metrics?: WebhookServerMetrics;
}

/** Parses large request bodies elsewhere than on the event loop. */
export interface LargeBodyParser {
  readonly fromBytes: number;
  parse(body: Buffer): Promise<unknown>;
}

export interface WebhookServer {
  /** The bound port (useful when 0 was asked for). */
  readonly port: number;
  /** Serves `tls` on every handshake from now on; connections already open keep their certificate. */
  reload(tls: CertificatePair): void;
  /**
   * Stops accepting connections, lets requests in flight finish for up to `graceMs`, then closes what is left.
   * @default graceMs 5_000
   */
  close(options?: { readonly graceMs?: number }): Promise<void>;
}

const defaultMaxBodyBytes = 3 * 1024 * 1024;
const defaultMaxBufferedBytes = 32 * 1024 * 1024;
/** How long a closing server keeps answering on connections already open (each answer closes its connection). */
const drainMs = 2_000;
/** net.Server's own close: stops listening without closing the open connections (http.Server's closes idle ones). */
const netServerClose = NetServer.prototype.close;

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}

/** Starts listening; resolves once the port is bound. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  const handlerTimeoutMs = options.handlerTimeoutMs ?? 30_000;
  const logger = options.logger;
  const buffered = new ByteBudget(options.maxBufferedBytes ?? defaultMaxBufferedBytes);
  let draining = false;
  const server: Server = createServer(
    // A connection that has not finished its TLS handshake in 5 s is dropped (Node's default waits 120 s, and
    // the timeouts below start only once the handshake is done).
    { cert: options.tls.cert, key: options.tls.key, minVersion: "TLSv1.2", handshakeTimeout: 5_000 },
    (req, res) => {
      if (draining) res.setHeader("connection", "close");
      const limits = {
        maxBodyBytes,
        buffered,
        handlerTimeoutMs,
        logger,
        metrics: options.metrics,
        parseLarge: options.parseLarge,
      };
      serve(req, res, options.routes, limits).catch((error: unknown) => {
        logger.error({ err: error, path: req.url }, "webhook request failed");
        if (!res.headersSent) replyText(res, 500, "internal error");
        else res.destroy();
      });
    },
  );
  // The apiserver (Go's http.Transport) keeps idle connections for 90 s. If this side closed an idle connection
  // first, a request the apiserver is just sending on it would fail (Go does not retry a POST), and with
  // failurePolicy Fail that is a refused kubectl apply: so the client closes first (the one exception: at the
  // connection ceiling, connection-limits.ts).
  server.keepAliveTimeout = 120_000;
  // A client must send its whole request within this time (slowloris); admission requests are small.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  const max = options.maxConnections ?? 1000;
  limitConnections(
    server,
    {
      max,
      maxPerAddress: options.maxConnectionsPerAddress ?? 256,
      ...(options.minIdleMsToReplace === undefined ? {} : { minIdleMs: options.minIdleMsToReplace }),
    },
    logger,
  );
  server.on("tlsClientError", (error) => logger.debug({ err: error }, "webhook TLS handshake failed"));
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(listenError(error, options, options.flag));
    server.once("error", failed);
    server.listen(options.port, options.host, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ host: options.host, port, paths: Object.keys(options.routes) }, "serving admission webhooks");
  return {
    port,
    reload(tls) {
      server.setSecureContext({ cert: tls.cert, key: tls.key, minVersion: "TLSv1.2" });
    },
    async close({ graceMs = 5_000 } = {}) {
      // Closing an idle keep-alive connection races with a request the apiserver is just sending on it (Go does
      // not retry a POST: an EOF, and with failurePolicy Fail a refused write). So: stop listening but leave open
      // connections be (http.Server#close would close the idle ones at once), answer whatever still comes with
      // `Connection: close` so the apiserver moves to another replica, and close what is left once the
      // connections have been quiet or the grace is over.
      draining = true;
      const closed = new Promise<void>((resolve) => netServerClose.call(server, () => resolve()));
      const drainUntil = realClock.monotonicMs() + Math.min(drainMs, graceMs);
      while (realClock.monotonicMs() < drainUntil && (await openConnections(server)) > 0) await sleep(100);
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), Math.max(0, graceMs - drainMs));
      await closed;
      clearTimeout(timer);
    },
  };
}

/** Bytes of request bodies held by all requests together (hand-written: a counter with a ceiling). */
class ByteBudget {
  private held = 0;
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  /** Takes `bytes` if they fit; false, taking nothing, if not. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.max) return false;
    this.held += bytes;
    return true;
  }
  give(bytes: number): void {
    this.held -= bytes;
  }
}

interface ServeLimits {
  readonly maxBodyBytes: number;
  readonly buffered: ByteBudget;
  readonly handlerTimeoutMs: number;
  readonly logger: Logger;
  readonly metrics: WebhookServerMetrics | undefined;
  readonly parseLarge: LargeBodyParser | undefined;
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  routes: Readonly<Record<string, WebhookHandler>>,
  limits: ServeLimits,
): Promise<void> {
  const started = realClock.monotonicMs();
  const path = new URL(req.url ?? "/", "https://webhook").pathname;
  const handler = Object.hasOwn(routes, path) ? routes[path] : undefined;
  // Metrics are labelled by route; any other path is one series, so a scanner cannot grow them.
  const route = handler ? path : "other";
  limits.metrics?.started(route);
  // What each branch answered; a throw is the caller's 500.
  let status = 500;
  // Bytes of this request's body counted in the shared budget.
  let held = 0;
  const done = (answered: number) => {
    status = answered;
  };
  try {
    if (!handler) {
      replyText(res, 404, `not found: this server answers POST ${Object.keys(routes).join(", ")}`);
      return done(404);
    }
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      replyText(res, 405, "method not allowed: POST only");
      return done(405);
    }
    const read = await readBody(req, limits.maxBodyBytes, limits.buffered);
    held = read.held;
    const { body } = read;
    if (body === tooBusy) {
      limits.logger.debug({ path }, "webhook request refused: too many request bytes held");
      res.setHeader("connection", "close");
      replyText(res, 503, "too many request bytes in flight; retry");
      return done(503);
    }
    if (body === tooLarge) {
      limits.logger.warn({ path, maxBodyBytes: limits.maxBodyBytes }, "webhook request body too large");
      // The rest of the body is not read: close the connection rather than drain it.
      res.setHeader("connection", "close");
      replyText(res, 413, `request body larger than ${limits.maxBodyBytes} bytes`);
      return done(413);
    }
    let parsed: unknown;
    try {
      const large = limits.parseLarge;
      parsed =
        large && body.byteLength >= large.fromBytes ? await large.parse(body) : JSON.parse(body.toString("utf8"));
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      replyText(res, 400, `request body is not JSON: ${error.message}`);
      return done(400);
    }
    let answer: unknown;
    try {
      answer = await withTimeout(handler(parsed), limits.handlerTimeoutMs);
    } catch (error) {
      if (error === timedOut) {
        limits.logger.error({ path, handlerTimeoutMs: limits.handlerTimeoutMs }, "webhook handler timed out");
        replyText(res, 504, `no answer within ${limits.handlerTimeoutMs} ms`);
        return done(504);
      }
      if (error instanceof WebhookRequestError) {
        limits.logger.warn({ path, status: error.status, reason: error.message }, "webhook request refused");
        replyText(res, error.status, error.message);
        return done(error.status);
      }
      throw error;
    }
    const json = JSON.stringify(answer);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
    res.end(json);
    done(200);
  } finally {
    // Held until the answer: the parsed body lives as long as its handler.
    limits.buffered.give(held);
    const ms = realClock.monotonicMs() - started;
    limits.metrics?.finished(route, status, ms / 1000);
    limits.logger.debug({ path, status, ms: Math.round(ms) }, "webhook request");
  }
}

const tooLarge = Symbol("too large");
const tooBusy = Symbol("too busy");
const timedOut = Symbol("timed out");

/**
 * The body, or why it was not read whole; `held` is what it took of `budget` (the caller gives it back). Each chunk
 * is counted as it arrives, so a body sent slowly holds only what has come.
 */
function readBody(
  req: IncomingMessage,
  max: number,
  budget: ByteBudget,
): Promise<{ body: Buffer | typeof tooLarge | typeof tooBusy; held: number }> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve({ body: tooLarge, held: 0 });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (body: typeof tooLarge | typeof tooBusy) => {
      req.off("data", onData);
      req.pause();
      chunks.length = 0;
      resolve({ body, held: size });
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.byteLength > max) return stop(tooLarge);
      if (!budget.take(chunk.byteLength)) return stop(tooBusy);
      size += chunk.byteLength;
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve({ body: Buffer.concat(chunks), held: size }));
    req.once("error", (error) => {
      budget.give(size);
      reject(error);
    });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function replyText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(`${text}\n`);
}
