/**
 * A request-counting proxy in front of the local apiserver: each operator of a side-by-side run reaches the
 * cluster only through its own proxy, which counts its requests by verb and resource, watches apart.
 *
 * The proxy speaks TLS (with HTTP/2 offered by ALPN next to HTTP/1.1), as a real apiserver does, so each operator
 * pays its own handshakes and uses the protocol it would use in a cluster: client-go negotiates HTTP/2, undici
 * stays on HTTP/1.1. Upstream it forwards with the admin credentials of KUBECONFIG over one keep-alive pool.
 * Hand-written: no proxy library counts Kubernetes requests by verb and kind; this is ~150 lines of node:http2.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:https";
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from "node:http2";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { parse } from "yaml";

/** What the apiserver is and how to reach it as admin, read from a kubeconfig's current context. */
export interface Upstream {
  readonly url: URL;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly token?: string;
}

/** A Kubernetes request as the counters see it. */
export interface RequestInfo {
  /** get, list, watch, create, update, patch, delete, deletecollection; or the method for non-resource paths. */
  readonly verb: string;
  /** `deployments`, `myappinstances/status`, ... ; the path for non-resource requests (`/version`). */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
}

/** Headers that belong to one connection (and that HTTP/2 forbids). */
const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

const writeVerbs = new Set(["create", "update", "patch", "delete", "deletecollection"]);

export function isWrite(info: RequestInfo): boolean {
  return writeVerbs.has(info.verb);
}

/** A snapshot of the counters: `<verb> <resource>` → requests. */
export type Counts = Readonly<Record<string, number>>;

export interface CountingProxy {
  /** Kubeconfig file that points at the proxy (trusting its certificate, no credentials). */
  readonly kubeconfig: string;
  /** Requests so far by `<verb> <resource>`. */
  counts(): Counts;
  /** Calls `listener` for every request from now on; returns a function that stops that. */
  onRequest(listener: (info: RequestInfo, at: number) => void): () => void;
  /** Calls `listener` as each request (not a watch) is answered: when it came (`at`) and how long it took. */
  onAnswer(listener: (info: RequestInfo, at: number, ms: number) => void): () => void;
  close(): Promise<void>;
}

/** Requests of `counts` that match `filter`, summed. */
export function total(counts: Counts, filter: (verb: string, resource: string) => boolean = () => true): number {
  let sum = 0;
  for (const [key, value] of Object.entries(counts)) {
    const [verb = "", resource = ""] = key.split(" ");
    if (filter(verb, resource)) sum += value;
  }
  return sum;
}

/** Counts made between two snapshots. */
export function since(now: Counts, before: Counts): Counts {
  const diff: Record<string, number> = {};
  for (const [key, value] of Object.entries(now)) {
    const delta = value - (before[key] ?? 0);
    if (delta > 0) diff[key] = delta;
  }
  return diff;
}

export const writesOf = (counts: Counts) => total(counts, (verb) => writeVerbs.has(verb));
/** Writes other than Events (core or events.k8s.io): the work itself, beside what an operator tells about it. */
export const writesWithoutEventsOf = (counts: Counts) =>
  total(counts, (verb, resource) => writeVerbs.has(verb) && resource !== "events");
export const readsOf = (counts: Counts) => total(counts, (verb) => verb === "get" || verb === "list");
export const watchesOf = (counts: Counts) => total(counts, (verb) => verb === "watch");

/** Parses an apiserver path and method the way the apiserver's RequestInfoFactory does (for the common shapes). */
export function requestInfo(method: string, url: URL): RequestInfo {
  const parts = url.pathname.split("/").filter(Boolean);
  const rest = parts[0] === "api" ? parts.slice(2) : parts[0] === "apis" ? parts.slice(3) : undefined;
  if (!rest || rest.length === 0) return { verb: method.toLowerCase(), resource: url.pathname };
  let namespace: string | undefined;
  let tail = rest;
  if (tail[0] === "namespaces" && tail.length >= 3) {
    namespace = tail[1];
    tail = tail.slice(2);
  }
  const [kind = "", name, ...sub] = tail;
  const resource = sub.length > 0 ? `${kind}/${sub.join("/")}` : kind;
  const watch = url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1";
  const verb = (() => {
    switch (method) {
      case "GET":
        return watch ? "watch" : name ? "get" : "list";
      case "POST":
        return "create";
      case "PUT":
        return "update";
      case "PATCH":
        return "patch";
      case "DELETE":
        return name ? "delete" : "deletecollection";
      default:
        return method.toLowerCase();
    }
  })();
  return { verb, resource, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) };
}

/** The apiserver of a kubeconfig's current context, with its admin credentials. */
export function readUpstream(kubeconfigPath: string): Upstream {
  type Named<T> = { name: string } & T;
  const config = parse(readFileSync(kubeconfigPath, "utf8")) as {
    "current-context"?: string;
    contexts?: Named<{ context: { cluster: string; user: string } }>[];
    clusters?: Named<{ cluster: Record<string, string> }>[];
    users?: Named<{ user: Record<string, string> }>[];
  };
  const context = config.contexts?.find((c) => c.name === config["current-context"]) ?? config.contexts?.[0];
  const cluster = config.clusters?.find((c) => c.name === context?.context.cluster)?.cluster;
  const user = config.users?.find((u) => u.name === context?.context.user)?.user ?? {};
  if (!cluster?.server) throw new Error(`${kubeconfigPath}: no cluster server in its current context`);
  const dir = path.dirname(kubeconfigPath);
  const material = (data?: string, file?: string) =>
    data ? Buffer.from(data, "base64") : file ? readFileSync(path.resolve(dir, file)) : undefined;
  const ca = material(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  const cert = material(user["client-certificate-data"], user["client-certificate"]);
  const key = material(user["client-key-data"], user["client-key"]);
  return {
    url: new URL(cluster.server),
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(user.token ? { token: user.token } : {}),
  };
}

/** A throwaway self-signed certificate for 127.0.0.1 (openssl: Node cannot make X.509 certificates itself). */
function selfSignedCertificate(dir: string): { cert: Buffer; key: Buffer } {
  const certFile = path.join(dir, "proxy.crt");
  const keyFile = path.join(dir, "proxy.key");
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"],
      ...["-subj", "/CN=myapp-bench-proxy", "-addext", "subjectAltName=IP:127.0.0.1"],
      ...["-keyout", keyFile, "-out", certFile],
    ],
    { stdio: "ignore" },
  );
  return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

/** Starts a proxy for the cluster of `kubeconfigPath` on a free port of 127.0.0.1. */
export async function startCountingProxy(kubeconfigPath: string, label: string): Promise<CountingProxy> {
  const upstream = readUpstream(kubeconfigPath);
  const dir = mkdtempSync(path.join(tmpdir(), `myapp-bench-proxy-${label}-`));
  const { cert, key } = selfSignedCertificate(dir);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: Infinity,
    ...(upstream.ca ? { ca: upstream.ca } : {}),
    ...(upstream.cert ? { cert: upstream.cert } : {}),
    ...(upstream.key ? { key: upstream.key } : {}),
  });
  const counts: Record<string, number> = {};
  const listeners = new Set<(info: RequestInfo, at: number) => void>();
  const answerListeners = new Set<(info: RequestInfo, at: number, ms: number) => void>();

  const handle = (req: IncomingMessage | Http2ServerRequest, response: ServerResponse | Http2ServerResponse) => {
    // Both protocols' responses have the same writeHead/end/pipe target; typed as the HTTP/1 one.
    const res = response as ServerResponse;
    const url = new URL(req.url ?? "/", "https://proxy");
    const info = requestInfo(req.method ?? "GET", url);
    const key = `${info.verb} ${info.resource}`;
    counts[key] = (counts[key] ?? 0) + 1;
    const at = performance.now();
    for (const listener of listeners) listener(info, at);
    if (info.verb !== "watch" && answerListeners.size > 0) {
      res.on("finish", () => {
        for (const listener of answerListeners) listener(info, at, performance.now() - at);
      });
    }

    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      // HTTP/2 pseudo-headers and hop-by-hop headers do not travel upstream.
      if (value === undefined || name.startsWith(":") || hopByHop.has(name)) continue;
      if (name === "host" || name === "authorization") continue;
      headers[name] = value;
    }
    if (upstream.token) headers.authorization = `Bearer ${upstream.token}`;
    const forward = request(
      {
        agent,
        protocol: "https:",
        hostname: upstream.url.hostname,
        port: upstream.url.port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
      },
      (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value === undefined || hopByHop.has(name)) continue;
          out[name] = value;
        }
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res as NodeJS.WritableStream);
        // A watch ends when the client goes away: stop the upstream stream too (a complete answer keeps its socket).
        res.on("close", () => {
          if (!answer.complete) answer.destroy();
        });
      },
    );
    forward.on("error", (error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", status: "Failure", code: 502, message: `proxy: ${error.message}` }));
    });
    req.pipe(forward);
    req.on("aborted", () => forward.destroy());
  };

  const server: Http2SecureServer = createSecureServer({ allowHTTP1: true, cert, key }, handle);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = path.join(dir, "kubeconfig");
  writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      `- name: ${label}`,
      "  cluster:",
      `    server: https://127.0.0.1:${port}`,
      `    certificate-authority-data: ${cert.toString("base64")}`,
      "users:",
      `- name: ${label}`,
      // The proxy holds the credentials; a token no one checks keeps clients from looking for others.
      "  user:",
      "    token: counted-by-proxy",
      "contexts:",
      `- name: ${label}`,
      "  context:",
      `    cluster: ${label}`,
      `    user: ${label}`,
      `current-context: ${label}`,
      "",
    ].join("\n"),
  );

  return {
    kubeconfig,
    counts: () => ({ ...counts }),
    onRequest(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onAnswer(listener) {
      answerListeners.add(listener);
      return () => answerListeners.delete(listener);
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open watch streams keep the server from closing; end them.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        setTimeout(resolve, 2_000).unref();
      });
      agent.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The same proxy on a worker thread (support/counting-proxy-worker.ts): counts and request events come back as
 * messages; request times are translated to this thread's performance.now(). Answers come back only with
 * `answers` (a message per request more, for a request log).
 */
export async function startCountingProxyThread(
  kubeconfigPath: string,
  label: string,
  { answers = false }: { readonly answers?: boolean } = {},
): Promise<CountingProxy> {
  const worker = new Worker(new URL("./counting-proxy-worker.ts", import.meta.url), {
    workerData: { kubeconfigPath, label, answers },
  });
  const counts: Record<string, number> = {};
  const listeners = new Set<(info: RequestInfo, at: number) => void>();
  const answerListeners = new Set<(info: RequestInfo, at: number, ms: number) => void>();
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    worker.once("error", reject);
    worker.on(
      "message",
      (message: {
        kubeconfig?: string;
        request?: RequestInfo;
        answer?: RequestInfo;
        epochMs?: number;
        ms?: number;
      }) => {
        if (message.kubeconfig) resolve(message.kubeconfig);
        const at = (message.epochMs ?? 0) - performance.timeOrigin;
        if (message.answer) {
          for (const listener of answerListeners) listener(message.answer, at, message.ms ?? 0);
          return;
        }
        if (!message.request) return;
        const key = `${message.request.verb} ${message.request.resource}`;
        counts[key] = (counts[key] ?? 0) + 1;
        for (const listener of listeners) listener(message.request, at);
      },
    );
  });
  return {
    kubeconfig,
    counts: () => ({ ...counts }),
    onRequest(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onAnswer(listener) {
      if (!answers) throw new Error("onAnswer: start the proxy thread with { answers: true }");
      answerListeners.add(listener);
      return () => answerListeners.delete(listener);
    },
    async close() {
      const exited = new Promise((resolve) => worker.once("exit", resolve));
      worker.postMessage({ close: true });
      const timer = setTimeout(() => void worker.terminate(), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
