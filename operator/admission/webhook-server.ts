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
import type { CertificatePair } from "./certificates.ts";

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
  /** Path → handler, e.g. `{ "/validate": ..., "/mutate": ... }`; the apiserver's `?timeout=10s` query is ignored. */
  readonly routes: Readonly<Record<string, WebhookHandler>>;
  readonly logger: Logger;
  /** A larger body is refused with 413. @default 3 MiB, the apiserver's own limit on an admission request */
  readonly maxBodyBytes?: number;
  /**
   * A handler that has not answered after this long gets a 504. The apiserver gives up after the webhook's
   * timeoutSeconds (at most 30 s) anyway; this bounds the work left behind. @default 30_000
   */
  readonly handlerTimeoutMs?: number;
  readonly metrics?: WebhookServerMetrics;
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
  let draining = false;
  const server: Server = createServer(
    { cert: options.tls.cert, key: options.tls.key, minVersion: "TLSv1.2" },
    (req, res) => {
      if (draining) res.setHeader("connection", "close");
      serve(req, res, options.routes, { maxBodyBytes, handlerTimeoutMs, logger, metrics: options.metrics }).catch(
        (error: unknown) => {
          logger.error({ err: error, path: req.url }, "webhook request failed");
          if (!res.headersSent) replyText(res, 500, "internal error");
          else res.destroy();
        },
      );
    },
  );
  // The apiserver (Go's http.Transport) keeps idle connections for 90 s. If this side closed an idle connection
  // first, a request the apiserver is just sending on it would fail (Go does not retry a POST), and with
  // failurePolicy Fail that is a refused kubectl apply: so the client always closes first.
  server.keepAliveTimeout = 120_000;
  // A client must send its whole request within this time (slowloris); admission requests are small.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  server.on("tlsClientError", (error) => logger.debug({ err: error }, "webhook TLS handshake failed"));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
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

interface ServeLimits {
  readonly maxBodyBytes: number;
  readonly handlerTimeoutMs: number;
  readonly logger: Logger;
  readonly metrics: WebhookServerMetrics | undefined;
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
    const body = await readBody(req, limits.maxBodyBytes);
    if (body === tooLarge) {
      limits.logger.warn({ path, maxBodyBytes: limits.maxBodyBytes }, "webhook request body too large");
      // The rest of the body is not read: close the connection rather than drain it.
      res.setHeader("connection", "close");
      replyText(res, 413, `request body larger than ${limits.maxBodyBytes} bytes`);
      return done(413);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch (error) {
      replyText(res, 400, `request body is not JSON: ${(error as Error).message}`);
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
    const ms = realClock.monotonicMs() - started;
    limits.metrics?.finished(route, status, ms / 1000);
    limits.logger.debug({ path, status, ms: Math.round(ms) }, "webhook request");
  }
}

const tooLarge = Symbol("too large");
const timedOut = Symbol("timed out");

function readBody(req: IncomingMessage, max: number): Promise<Buffer | typeof tooLarge> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve(tooLarge);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > max) {
        req.off("data", onData);
        req.pause();
        resolve(tooLarge);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
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
