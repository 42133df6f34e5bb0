/**
 * An apiserver brown-out on demand: a local HTTP proxy in front of the local cluster's apiserver that forwards
 * every request (watches stream through) with the admin credentials, until `brownOut(true)`: from then on every
 * request gets 503 ServiceUnavailable and the watches in flight are cut, as an overloaded or restarting apiserver
 * behind a load balancer answers. An operator pointed at `kubeconfigFile` sees exactly that; everything else
 * (the test's own client) still talks to the apiserver directly.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { parse, stringify } from "yaml";

interface KubeconfigFile {
  clusters: { cluster: { server: string; "certificate-authority"?: string } }[];
  users: { user: { "client-certificate"?: string; "client-key"?: string } }[];
}

export interface BrownoutProxy {
  /** A kubeconfig that reaches the apiserver through the proxy. */
  readonly kubeconfigFile: string;
  brownOut(on: boolean): void;
  /** Requests forwarded and refused so far. */
  readonly counts: { forwarded: number; refused: number };
  close(): Promise<void>;
}

const unavailable = JSON.stringify({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: "the server is currently unable to handle the request (chaos: brown-out)",
  reason: "ServiceUnavailable",
  code: 503,
});

/** Starts the proxy for the cluster of the admin kubeconfig `adminKubeconfig`; writes its own to `kubeconfigFile`. */
export async function startBrownoutProxy(adminKubeconfig: string, kubeconfigFile: string): Promise<BrownoutProxy> {
  const admin = parse(readFileSync(adminKubeconfig, "utf8")) as KubeconfigFile;
  const cluster = admin.clusters[0]!.cluster;
  const user = admin.users[0]!.user;
  const upstream = new URL(cluster.server);
  const tls = {
    ca: readFileSync(cluster["certificate-authority"]!),
    cert: readFileSync(user["client-certificate"]!),
    key: readFileSync(user["client-key"]!),
  };
  let down = false;
  const counts = { forwarded: 0, refused: 0 };
  const sockets = new Set<Socket>();

  const refuse = (response: ServerResponse) => {
    counts.refused++;
    response.writeHead(503, { "content-type": "application/json" });
    response.end(unavailable);
  };
  const forward = (request: IncomingMessage, response: ServerResponse) => {
    if (down) return refuse(response);
    counts.forwarded++;
    const headers = { ...request.headers, host: upstream.host };
    delete headers.authorization; // the proxy speaks as the admin of the local cluster
    const outgoing = httpsRequest(
      { ...tls, host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    outgoing.on("error", () => response.destroy());
    response.on("close", () => outgoing.destroy());
    request.pipe(outgoing);
  };

  const server = createServer(forward);
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  writeFileSync(
    kubeconfigFile,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      // client-node refuses plain HTTP unless TLS verification is off; there is no TLS to verify on loopback.
      clusters: [
        { name: "brownout", cluster: { server: `http://127.0.0.1:${port}`, "insecure-skip-tls-verify": true } },
      ],
      users: [{ name: "brownout", user: { token: "unused-the-proxy-authenticates" } }],
      contexts: [{ name: "brownout", context: { cluster: "brownout", user: "brownout" } }],
      "current-context": "brownout",
    }),
  );
  return {
    kubeconfigFile,
    counts,
    brownOut(on) {
      down = on;
      // An apiserver going away ends its watches too.
      if (on) for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
