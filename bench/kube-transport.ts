/**
 * The cost of kube/'s transport: start-up RSS of importing kube/, then N sequential GETs through one KubeClient
 * against a local HTTPS server with a self-signed CA (like a real apiserver: TLS, a CA in the kubeconfig, a bearer
 * token), counting TLS handshakes on the server side. Prints one JSON line; kube/README.md records the figures.
 *
 *   npx node --expose-gc bench/kube-transport.ts [requests=1000]
 *
 * Needs the openssl CLI (to make the throwaway certificate).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const requests = Number(process.argv[2] ?? 1000);
const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const gc = (globalThis as { gc?: () => void }).gc;

const rssBeforeImport = process.memoryUsage().rss;
const kube = await import("../kube/index.ts");
gc?.();
const rssAfterImport = process.memoryUsage().rss;

const dir = mkdtempSync(join(tmpdir(), "kube-transport-"));
try {
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"],
      ...["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
    ],
    { stdio: "ignore" },
  );
  const cert = readFileSync(join(dir, "cert.pem"));
  let handshakes = 0;
  const server = createServer({ key: readFileSync(join(dir, "key.pem")), cert }, (_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "default" } }));
  });
  server.on("secureConnection", () => handshakes++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: ${cert.toString("base64")}}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c`;
  const client = new kube.KubeClient(kube.loadKubeConfig({ kubeconfig }));
  await client.get("v1", "Namespace", "default");
  const started = performance.now();
  for (let i = 0; i < requests; i++) await client.get("v1", "Namespace", "default");
  const elapsed = performance.now() - started;
  const rssAfterRequests = process.memoryUsage().rss;
  gc?.();
  const closable = client as { close?: () => Promise<void> };
  await closable.close?.();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  console.log(
    JSON.stringify({
      requests,
      importRssMiB: mib(rssAfterImport - rssBeforeImport),
      startRssMiB: mib(rssAfterImport),
      requestsRssMiB: mib(rssAfterRequests - rssAfterImport),
      peakRssMiB: mib(process.resourceUsage().maxRSS * 1024),
      handshakes: handshakes,
      msPerRequest: Math.round((elapsed / requests) * 100) / 100,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
