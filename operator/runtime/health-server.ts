/**
 * The operator's HTTP endpoints: /metrics (Prometheus text), /healthz (the process serves requests), /readyz (every
 * informer has synced and its watch is connected, or being re-established for less than a threshold). A standby is ready too: it holds warm caches and
 * can take over at once; readiness is about "could serve", not "is leader".
 * The output of /healthz and /readyz follows the apiserver's own: "ok", or one "[+]/[-]name" line per check.
 * One server can serve both kinds, or each its own (`serves`): the probes must be reachable by the kubelet, while
 * /metrics stays on localhost unless asked otherwise (it tells an attacker a lot about the cluster).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { limitConnections, type ConnectionLimits } from "./connection-limits.ts";
import type { AccessVerdict } from "./metrics-auth.ts";

/** One named readiness condition. */
export interface ReadinessCheck {
  /** Its /readyz line; unique among a server's checks (startHealthServer refuses a repeat). */
  readonly name: string;
  /** `ok` plus a short reason shown when it fails. Must be cheap and synchronous: probes call it often. */
  check(): { readonly ok: boolean; readonly detail: string };
}

/** The parts of an Informer a readiness check reads. */
export interface InformerHealth {
  readonly kind: string;
  /** Its group goes into the check's name (`Deployment.apps`); the core group adds nothing. */
  readonly apiVersion?: string;
  /** The watched namespace, in the check's name; undefined for all namespaces. */
  readonly namespace?: string | undefined;
  hasSynced(): boolean;
  /** Milliseconds without a watch the apiserver accepted (0 while one is open). */
  disconnectedFor(): number;
  /** Milliseconds since the apiserver last sent something; shown, not judged (a quiet resource sends nothing). */
  staleness(): number;
}

/**
 * Ready when the informer has synced and has a watch the apiserver accepted, or has been re-establishing it for at most
 * `maxDisconnectedMs` (its retries back off to at most 30 s, reconnectBackoffCapMs, so 5 min without a watch means a
 * real outage). Not "heard from recently": a quiet resource, on an apiserver that sends no bookmarks, has no events for
 * hours and is current.
 */
export function informerReadiness(informer: InformerHealth, maxDisconnectedMs = 300_000): ReadinessCheck {
  return {
    name: informerCheckName(informer),
    check() {
      if (!informer.hasSynced()) return { ok: false, detail: "initial list not done" };
      const seconds = (ms: number) => `${Math.round(ms / 1000)}s`;
      const disconnected = informer.disconnectedFor();
      const heard = `heard ${seconds(informer.staleness())} ago`;
      if (disconnected > maxDisconnectedMs) {
        return { ok: false, detail: `no watch accepted by the apiserver for ${seconds(disconnected)}, ${heard}` };
      }
      return { ok: true, detail: disconnected === 0 ? `watching, ${heard}` : `reconnecting, ${heard}` };
    },
  };
}

/**
 * `informer-<Kind>[.<group>][/<namespace>]`, as kubectl names resources: an operator watching two namespaces has an
 * informer of each kind per namespace, and each needs its own /readyz line (one name for both hid one of them).
 */
export function informerCheckName(informer: Pick<InformerHealth, "kind" | "apiVersion" | "namespace">): string {
  const slash = informer.apiVersion?.lastIndexOf("/") ?? -1;
  const group = slash > 0 ? `.${informer.apiVersion!.slice(0, slash)}` : "";
  return `informer-${informer.kind}${group}${informer.namespace ? `/${informer.namespace}` : ""}`;
}

export interface HealthServerOptions {
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** @default "0.0.0.0" (in a pod, probes and Prometheus come from outside) */
  readonly host?: string;
  readonly registry: Registry;
  readonly readiness: readonly ReadinessCheck[];
  readonly logger: Logger;
  /** Which endpoints this server answers; the others get 404. @default both */
  readonly serves?: { readonly metrics?: boolean; readonly probes?: boolean };
  /** Guards /metrics (see metrics-auth.ts); the probes stay open, as the kubelet sends no credentials. */
  readonly authorizeMetrics?: (request: IncomingMessage, path: string) => Promise<AccessVerdict>;
  /** Serve HTTPS with this certificate and key (PEM) instead of HTTP. */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** The setting that chose this address (`--health-probe-bind-address`): what a failure to listen names. */
  readonly flag?: string;
}

export interface HealthServer {
  /** The bound port (useful when 0 was asked for). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Who may hold the probe and metrics ports' connections (connection-limits.ts). Anyone on the pod network can reach
 * them: with one ceiling that refused newcomers (net.Server's maxConnections), one pod holding 256 connections
 * whose headers it never finished, reconnecting as each got its 408, failed every kubelet probe (1 s timeout) for as
 * long as it kept on: the operator restarted every 30 s and its webhooks left the Service. Now one address holds at
 * most 16 and its newcomers replace its own oldest unfinished or idle ones, and at the ceiling a newcomer replaces
 * the oldest of the address holding the most; only a connection whose request is being answered is kept.
 */
const connectionLimits: ConnectionLimits = { max: 512, maxPerAddress: 16, replace: "unanswered", minIdleMs: 0 };

/** Starts listening; resolves once the port is bound. Refuses readiness checks that share a name. */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const names = options.readiness.map((check) => check.name);
  const repeated = [...new Set(names.filter((name, index) => names.indexOf(name) !== index))];
  if (repeated.length > 0) {
    throw new Error(`readiness checks must have unique names, so /readyz shows each; repeated: ${repeated.join(", ")}`);
  }
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    handle(options, request, response).catch((error: unknown) => {
      options.logger.error({ err: error, path: request.url }, "health endpoint failed");
      if (!response.headersSent) reply(response, 500, "internal error\n");
      else response.end();
    });
  };
  // Probes and scrapes are short, whole GETs sent at once: a client that has not sent its headers within 2 s is
  // stalling, and Node checks for it every second (its default: every 30 s).
  const timeouts = { headersTimeout: 2_000, requestTimeout: 5_000, connectionsCheckingInterval: 1_000 };
  const server = options.tls
    ? createTlsServer({ ...options.tls, ...timeouts, handshakeTimeout: 2_000 }, listener)
    : createServer(timeouts, listener);
  // Do not let a stuck client hold the shutdown, or many hold the operator's memory.
  server.keepAliveTimeout = 5_000;
  // An answer the client does not read (a large /metrics) is given up after this long without progress.
  server.timeout = 30_000;
  limitConnections(server, { ...connectionLimits, name: "health server" }, options.logger);
  const host = options.host ?? "0.0.0.0";
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(listenError(error, { host, port: options.port }, options.flag));
    server.once("error", failed);
    server.listen(options.port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const paths = [...(servesMetrics(options) ? ["/metrics"] : []), ...(servesProbes(options) ? probePaths : [])];
  const secure = { tls: options.tls !== undefined, authenticated: options.authorizeMetrics !== undefined };
  options.logger.info({ host: options.host ?? "0.0.0.0", port, paths, ...secure }, `serving ${paths.join(", ")}`);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Why a server could not listen on `address`, in one line that names `flag`, the setting that chose it, and what to
 * do: Node's own words (`listen EADDRINUSE: address already in use 0.0.0.0:8081`) leave whoever starts the operator
 * to guess which of its listeners that is. Without a flag, the error as it was. Pure.
 */
export function listenError(
  error: Error,
  address: { readonly host: string; readonly port: number },
  flag: string | undefined,
): Error {
  if (flag === undefined) return error;
  const shown = `${address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}`;
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === "EADDRINUSE"
      ? "it is already in use by another process"
      : code === "EACCES"
        ? "not allowed (a port below 1024 needs privileges)"
        : code === "EADDRNOTAVAIL"
          ? "that is not an address of this machine"
          : error.message;
  return new Error(`cannot listen on ${shown} (${flag}): ${why}; pick another address with ${flag}=[host]:port`, {
    cause: error,
  });
}

/** The probe paths as logged and listed on a 404 (/livez answers too, as an alias of /healthz). */
const probePaths = ["/healthz", "/readyz"];
const servesMetrics = (options: HealthServerOptions) => options.serves?.metrics ?? true;
const servesProbes = (options: HealthServerOptions) => options.serves?.probes ?? true;

async function handle(options: HealthServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", "http://localhost");
  if (request.method !== "GET" && request.method !== "HEAD") return reply(response, 405, "method not allowed\n");
  const served = url.pathname === "/metrics" ? servesMetrics(options) : servesProbes(options);
  switch (served ? url.pathname : "") {
    case "/metrics": {
      const verdict = options.authorizeMetrics ? await options.authorizeMetrics(request, url.pathname) : undefined;
      if (verdict && !verdict.allowed) return reply(response, verdict.status, `${verdict.message}\n`);
      const body = await options.registry.metrics();
      return reply(response, 200, body, options.registry.contentType);
    }
    case "/healthz":
    case "/livez":
      return reply(response, 200, "ok\n");
    case "/readyz": {
      const results = options.readiness.map((check) => ({ name: check.name, ...check.check() }));
      const ready = results.every((result) => result.ok);
      const verbose = url.searchParams.has("verbose") || !ready;
      const lines = results.map((r) => (r.ok ? `[+]${r.name} ok: ${r.detail}` : `[-]${r.name} failed: ${r.detail}`));
      const body = verbose ? `${lines.join("\n")}\nreadyz check ${ready ? "passed" : "failed"}\n` : "ok\n";
      return reply(response, ready ? 200 : 503, body);
    }
    default: {
      const paths = [...(servesMetrics(options) ? ["/metrics"] : []), ...(servesProbes(options) ? probePaths : [])];
      return reply(response, 404, `not found: this port serves ${paths.join(", ")}\n`);
    }
  }
}

function reply(
  response: ServerResponse,
  status: number,
  body: string,
  contentType = "text/plain; charset=utf-8",
): void {
  response.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
  response.end(body);
}
