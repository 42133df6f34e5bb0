/**
 * Hostile chart sources on 127.0.0.1 for the hostile-tenant suite (test/chaos/hostile-tenants.ts):
 * - a counting server: answers nothing useful and counts every connection and request, for a URL the operator
 *   must never reach (it is outside the platform's allow-list);
 * - a slow-drip repository: answers 200 and then sends one byte per second, forever;
 * - a huge repository: streams an index.yaml of `bytes` bytes (200 MB by default), as fast as the reader takes it.
 *
 * Each counts what it saw, so a test can prove a source was (or was not) contacted, and closes every open socket
 * on `close()` (a dripping answer never ends by itself).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface HostileServer {
  /** `http://127.0.0.1:PORT/` (with the trailing slash a repository URL and an allow-list entry take). */
  readonly url: string;
  /** `127.0.0.1:PORT` */
  readonly host: string;
  /** TCP connections accepted (a client that connects and sends nothing still counts). */
  readonly connections: () => number;
  /** Requests received, as `METHOD path`. */
  readonly requests: readonly string[];
  /** Body bytes written so far (all answers). */
  readonly bytesSent: () => number;
  close(): Promise<void>;
}

async function serve(
  handler: (request: IncomingMessage, response: ServerResponse, sent: (n: number) => void) => void,
): Promise<HostileServer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    requests.push(`${request.method ?? ""} ${request.url ?? ""}`);
    handler(request, response, (n) => (bytes += n));
  });
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    host: `127.0.0.1:${port}`,
    connections: () => connections,
    requests,
    bytesSent: () => bytes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A server that must stay untouched: every connection and request is counted, each answered 404. */
export function startCountingServer(): Promise<HostileServer> {
  return serve((_request, response) => response.writeHead(404).end());
}

/**
 * A repository that never finishes an answer: headers at once (so a client's header timeout does not fire), then
 * one byte of a plausible index.yaml per second until the client goes away.
 */
export function startSlowDripServer(): Promise<HostileServer> {
  return serve((_request, response, sent) => {
    response.writeHead(200, { "content-type": "application/x-yaml" });
    const text = "apiVersion: v1\nentries:\n" + "#".repeat(1_000_000);
    let offset = 0;
    const timer = setInterval(() => {
      if (response.destroyed || offset >= text.length) return void clearInterval(timer);
      response.write(text[offset++]);
      sent(1);
    }, 1_000);
    response.on("close", () => clearInterval(timer));
  });
}

/**
 * A repository whose index.yaml is `bytes` long (valid YAML: one chart with ever more versions), streamed with
 * backpressure so the server itself never holds more than one chunk; and under /flood/ one whose index stays just
 * under the operator's 16 MiB cap but lists 2.4 million empty versions of chart `app` (`- {}`). Any other path: 404.
 */
export function startHugeIndexServer(bytes = 200 * 1024 * 1024): Promise<HostileServer> {
  const entry = (i: number) =>
    `    - apiVersion: v2\n      name: huge\n      version: 0.0.${i}\n      urls: [huge-0.0.${i}.tgz]\n`;
  const floodHead = "apiVersion: v1\nentries:\n  app:\n";
  const flood = floodHead + "  - {}\n".repeat(Math.floor((16 * 1024 * 1024 - 4096 - floodHead.length) / 7));
  return serve((request, response, sent) => {
    const path = new URL(request.url ?? "/", "http://x").pathname;
    if (path === "/flood/index.yaml") {
      sent(flood.length);
      return void response.writeHead(200, { "content-type": "application/x-yaml" }).end(flood);
    }
    if (path !== "/index.yaml") return void response.writeHead(404).end();
    // No content-length: the client learns the size only by reading, so its byte cap must hold mid-stream.
    response.writeHead(200, { "content-type": "application/x-yaml" });
    let written = 0;
    let version = 0;
    const head = "apiVersion: v1\nentries:\n  huge:\n";
    const pump = () => {
      while (written < bytes && !response.destroyed) {
        let chunk = written === 0 ? head : "";
        while (chunk.length < 64 * 1024) chunk += entry(version++);
        chunk = chunk.slice(0, bytes - written);
        written += chunk.length;
        sent(chunk.length);
        if (!response.write(chunk)) return void response.once("drain", pump);
      }
      if (!response.destroyed) response.end();
    };
    pump();
  });
}

/** A repository that answers every request with a redirect to `location` (by default the metadata endpoint). */
export function startRedirectServer(location = "http://169.254.169.254/latest/meta-data/"): Promise<HostileServer> {
  return serve((_request, response) => response.writeHead(302, { location }).end());
}
