/**
 * Chart sources served on 127.0.0.1 for the tests: an HTTP chart repository (index.yaml + .tgz files, as
 * `helm repo index` lays them out) and an OCI registry speaking the part of the distribution API that
 * `helm push` and `helm pull` use (blob upload, manifest put/get by tag or digest, blob get). Hand-written because
 * no registry can be downloaded here; it keeps everything in memory and has no auth.
 */
import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { stringify } from "yaml";

export interface LocalServer {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** `127.0.0.1:PORT` */
  readonly host: string;
  /** Requests served, as `METHOD path`, for assertions and diagnostics. */
  readonly requests: string[];
  close(): Promise<void>;
}

export interface ChartRepository extends LocalServer {
  /** Publishes a packed chart under its name and version; `index.yaml` lists it. */
  publish(name: string, version: string, chart: Buffer): void;
}

const sha256 = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function listen(handler: (request: IncomingMessage, body: Buffer, response: ServerResponse) => void) {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push(`${request.method ?? ""} ${request.url ?? ""}`);
      handler(request, Buffer.concat(chunks), response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/** An HTTP chart repository on 127.0.0.1. */
export async function startChartRepository(): Promise<ChartRepository> {
  const charts = new Map<string, { name: string; version: string; chart: Buffer }>();
  const server = await listen((request, _body, response) => {
    const path = new URL(request.url ?? "/", "http://x").pathname;
    if (path === "/index.yaml") {
      const entries: Record<string, unknown[]> = {};
      for (const [file, { name, version, chart }] of charts) {
        (entries[name] ??= []).push({ apiVersion: "v2", name, version, urls: [file], digest: sha256(chart).slice(7) });
      }
      response.writeHead(200, { "content-type": "application/x-yaml" }).end(stringify({ apiVersion: "v1", entries }));
      return;
    }
    const chart = charts.get(path.slice(1));
    if (chart) response.writeHead(200, { "content-type": "application/gzip" }).end(chart.chart);
    else response.writeHead(404).end();
  });
  return {
    ...server,
    publish: (name, version, chart) => charts.set(`${name}-${version}.tgz`, { name, version, chart }),
  };
}

/** An OCI registry on 127.0.0.1 (plain HTTP): push with `helm push chart.tgz oci://HOST/charts --plain-http`. */
export async function startOciRegistry(): Promise<LocalServer> {
  const blobs = new Map<string, Buffer>();
  const manifests = new Map<string, { type: string; body: Buffer }>();
  const uploads = new Map<string, Buffer[]>();
  const server = await listen((request, body, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    const path = url.pathname;
    const method = request.method ?? "GET";
    if (path === "/v2/" || path === "/v2") {
      response.writeHead(200, { "docker-distribution-api-version": "registry/2.0" }).end("{}");
      return;
    }
    const upload = /^\/v2\/(.+)\/blobs\/uploads\/([^/]*)$/.exec(path);
    if (upload) {
      const [, repository, id] = upload;
      if (method === "POST") {
        const digest = url.searchParams.get("digest");
        if (digest) {
          blobs.set(digest, body);
          response
            .writeHead(201, { location: `/v2/${repository}/blobs/${digest}`, "docker-content-digest": digest })
            .end();
          return;
        }
        const session = randomUUID();
        uploads.set(session, []);
        response.writeHead(202, { location: `/v2/${repository}/blobs/uploads/${session}`, range: "0-0" }).end();
        return;
      }
      const parts = uploads.get(id ?? "");
      if (!parts) return void response.writeHead(404).end();
      parts.push(body);
      if (method === "PATCH") {
        const size = parts.reduce((n, part) => n + part.length, 0);
        response
          .writeHead(202, { location: `/v2/${repository}/blobs/uploads/${id}`, range: `0-${Math.max(size - 1, 0)}` })
          .end();
        return;
      }
      if (method === "PUT") {
        const digest = url.searchParams.get("digest") ?? "";
        const blob = Buffer.concat(parts);
        if (sha256(blob) !== digest) return void response.writeHead(400).end("digest mismatch");
        blobs.set(digest, blob);
        uploads.delete(id ?? "");
        response
          .writeHead(201, { location: `/v2/${repository}/blobs/${digest}`, "docker-content-digest": digest })
          .end();
        return;
      }
    }
    const blob = /^\/v2\/(.+)\/blobs\/(sha256:[a-f0-9]{64})$/.exec(path);
    if (blob) {
      const found = blobs.get(blob[2] ?? "");
      if (!found) return void response.writeHead(404).end();
      response
        .writeHead(200, {
          "content-length": found.length,
          "docker-content-digest": blob[2],
          "content-type": "application/octet-stream",
        })
        .end(method === "HEAD" ? undefined : found);
      return;
    }
    const manifest = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(path);
    if (manifest) {
      const key = `${manifest[1]}:${manifest[2]}`;
      if (method === "PUT") {
        const digest = sha256(body);
        const stored = { type: request.headers["content-type"] ?? "application/vnd.oci.image.manifest.v1+json", body };
        manifests.set(key, stored);
        manifests.set(`${manifest[1]}:${digest}`, stored);
        response
          .writeHead(201, { location: `/v2/${manifest[1]}/manifests/${digest}`, "docker-content-digest": digest })
          .end();
        return;
      }
      const found = manifests.get(key);
      if (!found) return void response.writeHead(404).end();
      response
        .writeHead(200, {
          "content-type": found.type,
          "content-length": found.body.length,
          "docker-content-digest": sha256(found.body),
        })
        .end(method === "HEAD" ? undefined : found.body);
      return;
    }
    response.writeHead(404).end();
  });
  return server;
}
