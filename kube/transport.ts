/**
 * The connection pool of one cluster connection: one undici Agent with keep-alive, holding the cluster's TLS
 * settings (CA, client certificate, server name, verification), shared by every request and watch of a KubeClient.
 * A TLS handshake costs ~10 ms of CPU and tens of KB of memory; reusing connections makes a request cost ~1 ms.
 * (client-node 2.0 builds a new Agent, hence a new connection, for every request.)
 * A cluster with `proxy-url` gets undici's ProxyAgent instead: HTTPS to the apiserver is tunnelled through the proxy
 * (CONNECT for http/https proxies, SOCKS5 for socks5), with the same TLS settings end to end and the same keep-alive.
 */
import { readFileSync } from "node:fs";
import { Agent, ProxyAgent } from "./undici.ts";
import type { Cluster, User } from "./config.ts";

/** Idle connections are kept this long for the next request (the apiserver keeps them ~90 s+). */
const keepAliveMs = 60_000;

/**
 * HTTP/1.1, not HTTP/2 (undici 8 negotiates HTTP/2 unless told not to). The apiserver ends an HTTP/2 connection with
 * GOAWAY after a 401 (a revoked or expired token), as it does on shutdown; undici (8.13 and 8.14) then leaves some
 * requests of that connection unanswered until their own timeout, 60 s, in about one in ten 401s with a few requests
 * in flight (test/integration/kube-transport.test.ts reproduces it): a fleet waited a minute after every token
 * renewal. Over HTTP/1.1 a watch holds a connection of its own, a few dozen for an operator, which the apiserver
 * and the pool take in their stride.
 */
const protocol = { allowH2: false };

/**
 * A keep-alive Agent for `cluster` (a ProxyAgent when it names a `proxy-url`), presenting `user`'s client
 * certificate if it has one.
 */
export function connectionPool(cluster: Cluster, user: User | null): Agent | ProxyAgent {
  const ca = pem(cluster.caData, cluster.caFile, `cluster "${cluster.name}" CA`);
  const cert = pem(user?.certData, user?.certFile, `user "${user?.name}" client certificate`);
  const key = pem(user?.keyData, user?.keyFile, `user "${user?.name}" client key`);
  if ((cert === undefined) !== (key === undefined)) {
    throw new Error(`kubeconfig user "${user?.name}" needs both a client certificate and a client key`);
  }
  const tls = {
    ...(ca ? { ca } : {}),
    ...(cert && key ? { cert, key } : {}),
    ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
    rejectUnauthorized: !cluster.skipTLSVerify,
  };
  const keepAlive = { keepAliveTimeout: keepAliveMs, keepAliveMaxTimeout: keepAliveMs, ...protocol };
  // The TLS settings are the apiserver's (requestTls), not the proxy's: an https proxy is verified as usual.
  if (cluster.proxyUrl) return new ProxyAgent({ uri: cluster.proxyUrl, requestTls: tls, ...keepAlive });
  return new Agent({ ...keepAlive, connect: tls });
}

function pem(data: string | undefined, file: string | undefined, what: string): Buffer | undefined {
  if (data) return Buffer.from(data, "base64");
  if (!file) return undefined;
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`cannot read the ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}
