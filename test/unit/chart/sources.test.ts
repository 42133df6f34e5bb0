/**
 * Chart sources fetched as a registry client should: only from the allow-list, within timeouts and byte caps,
 * never into private addresses the platform did not name, every OCI blob and manifest checked against its digest,
 * a token realm only on the registry's host; verdicts transient (network, timeout, 429, 5xx) or permanent (the
 * rest). Local HTTP servers on 127.0.0.1 play the sources.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test, type TestContext } from "node:test";
import { stringify } from "yaml";
import { ChartFetchError, chartLayerMediaType, chartSource } from "../../../chart/index.ts";
import { findIndexEntry } from "../../../chart/repository-index.ts";
import { largeHelmIndex } from "../../../bench/support/helm-index.ts";

interface Served {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly requests: string[];
}

async function serve(
  t: TestContext,
  handler: (request: IncomingMessage, response: ServerResponse) => void,
  host = "127.0.0.1",
): Promise<Served> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method ?? ""} ${request.url ?? ""}`);
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://${host}:${port}`, host: `${host}:${port}`, port, requests };
}

const noConfigMaps = () => Promise.resolve(undefined);
const sha256 = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const chartBytes = Buffer.from("a packed chart, as far as the fetcher cares");

async function rejection(promise: Promise<unknown>): Promise<ChartFetchError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ChartFetchError, `expected a ChartFetchError, got ${String(error)}`);
    return error;
  }
  assert.fail("the fetch succeeded");
}

/** A repository serving `index` and the chart at /c-1.0.0.tgz. */
function repository(index: () => string, chart: () => Buffer = () => chartBytes) {
  return (request: IncomingMessage, response: ServerResponse) => {
    if (request.url === "/index.yaml") response.end(index());
    else if (request.url === "/c-1.0.0.tgz") response.end(chart());
    else response.writeHead(404).end("<html>internal page with secrets</html>");
  };
}
const helmIndex = (url = "c-1.0.0.tgz") =>
  stringify({ apiVersion: "v1", entries: { c: [{ name: "c", version: "1.0.0", urls: [url] }] } });

test("a remote source not on the allow-list is refused permanently without a request; the default allows none", async (t) => {
  const server = await serve(
    t,
    repository(() => helmIndex()),
  );
  // GIVEN the default allow-list (none) and one naming another source
  for (const allowedSources of [undefined, ["https://charts.example.com/"]]) {
    const fetch = chartSource({ readConfigMap: noConfigMaps, ...(allowedSources ? { allowedSources } : {}) });
    // WHEN an instance names the local repository
    const error = await rejection(fetch({ repo: server.url, name: "c", version: "1.0.0" }, "ns"));
    // THEN it is refused, naming the flag, and not retried
    assert.equal(error.reason, "ChartSourceNotAllowed");
    assert.equal(error.transient, false);
    assert.equal(error.outsideSpec, false, "the platform's list changes with the operator's flags: a restart");
    assert.match(error.message, /--chart-sources/);
  }
  assert.deepEqual(server.requests, []);
  // AND an allow-list entry is a prefix ending at a path segment: /org does not cover /organization
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`${server.url}/org`] });
  const error = await rejection(fetch({ repo: `${server.url}/organization`, name: "c", version: "1.0.0" }, "ns"));
  assert.equal(error.reason, "ChartSourceNotAllowed");
});

test("a namespace's annotation narrows the allow-list: refused without a request, naming the namespace; the platform's own chart stays allowed", async (t) => {
  // A repository at every path.
  const server = await serve(t, (request, response) => {
    if (request.url?.endsWith("/index.yaml")) response.end(helmIndex());
    else if (request.url?.endsWith("/c-1.0.0.tgz")) response.end(chartBytes);
    else response.writeHead(404).end();
  });
  const asked: string[] = [];
  const annotations: Record<string, string> = { "team-a": "oci://ghcr.io/team-a/", "team-b": `${server.url}/` };
  const platformChart = { repo: `${server.url}/platform`, name: "c", version: "1.0.0" };
  const fetch = chartSource({
    readConfigMap: noConfigMaps,
    allowedSources: [`${server.url}/`, "oci://ghcr.io/"],
    namespaceSources: async (namespace) => {
      asked.push(namespace);
      return annotations[namespace];
    },
    platformChart,
  });
  // GIVEN team-a's namespace allows only its own registry path
  // WHEN one of its instances names the repository the platform allows
  const error = await rejection(fetch({ repo: `${server.url}/charts`, name: "c", version: "1.0.0" }, "team-a"));
  // THEN it is refused for good, naming the namespace, its annotation and what it allows; nothing is requested
  assert.equal(error.reason, "ChartSourceNotAllowed");
  assert.equal(error.transient, false);
  assert.equal(error.outsideSpec, true, "the namespace's owner may widen it: looked at again");
  assert.match(
    error.message,
    /in namespace team-a: its annotation myapp\.example\.com\/chart-sources allows oci:\/\/ghcr\.io\/team-a\//,
  );
  assert.deepEqual(server.requests, []);
  // AND the platform's own default chart is fetched there all the same
  assert.deepEqual(Buffer.from(await fetch({ ...platformChart, version: "1.0.0" }, "team-a")), chartBytes);
  // AND a namespace whose annotation names the repository, or that has none, fetches from it
  assert.deepEqual(
    Buffer.from(await fetch({ repo: `${server.url}/x`, name: "c", version: "1.0.0" }, "team-b")),
    chartBytes,
  );
  assert.deepEqual(
    Buffer.from(await fetch({ repo: `${server.url}/y`, name: "c", version: "1.0.0" }, "team-c")),
    chartBytes,
  );
  // AND the annotation is read for remote charts other than the platform's only
  assert.deepEqual(asked, ["team-a", "team-b", "team-c"]);
});

test("an allowed repository is fetched; its 404 is permanent and does not echo the body", async (t) => {
  const server = await serve(
    t,
    repository(() => helmIndex()),
  );
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url] });
  assert.deepEqual(Buffer.from(await fetch({ repo: server.url, name: "c", version: "1.0.0" }, "ns")), chartBytes);
  const missing = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url] });
  const error = await rejection(missing({ repo: `${server.url}/nothing`, name: "c", version: "1.0.0" }, "ns"));
  assert.equal(error.transient, false);
  assert.match(error.message, new RegExp(`${server.host} answered 404`));
  assert.doesNotMatch(error.message, /secrets|html/);
});

/** A repository of eleven 6 MiB chart versions (66 MiB, over the 64 MiB cache), and a count of chart downloads. */
async function largeChartRepository(t: TestContext) {
  const versions = Array.from({ length: 11 }, (_, i) => `1.0.${i}`);
  const packed = (version: string) => Buffer.alloc(6 * 1024 * 1024, version);
  const index = stringify({
    apiVersion: "v1",
    entries: { c: versions.map((version) => ({ name: "c", version, urls: [`c-${version}.tgz`] })) },
  });
  const server = await serve(t, (request, response) => {
    const version = /^\/c-(.+)\.tgz$/.exec(request.url ?? "")?.[1];
    if (request.url === "/index.yaml") response.end(index);
    else if (version) response.end(packed(version));
    else response.writeHead(404).end();
  });
  const downloads = () => server.requests.filter((request) => request.endsWith(".tgz")).length;
  return { server, versions, downloads };
}

test("one namespace's fetched charts take at most a share of the cache: another namespace's chart stays cached", async (t) => {
  // GIVEN a repository of charts that together overflow the cache
  const { server, versions, downloads } = await largeChartRepository(t);
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url] });
  // WHEN one namespace fetches the first version, then another namespace fetches all the others
  await fetch({ repo: server.url, name: "c", version: "1.0.0" }, "quiet");
  for (const version of versions.slice(1)) await fetch({ repo: server.url, name: "c", version }, "greedy");
  // THEN the first namespace's chart is still cached; the greedy one pushed out only its own
  const before = downloads();
  await fetch({ repo: server.url, name: "c", version: "1.0.0" }, "quiet");
  assert.equal(downloads(), before, "the quiet namespace's chart came from the cache");
  await fetch({ repo: server.url, name: "c", version: "1.0.1" }, "greedy");
  assert.equal(downloads(), before + 1, "the greedy namespace's oldest chart was fetched again");
});

test("the platform's own chart is in no namespace's share, whoever fetched it first", async (t) => {
  const { server, versions, downloads } = await largeChartRepository(t);
  const platformChart = { repo: server.url, name: "c", version: "1.0.0" };
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url], platformChart });
  // GIVEN a namespace that fetched the platform's chart first, then enough of its own to overflow its share
  await fetch(platformChart, "greedy");
  for (const version of versions.slice(1, 5)) await fetch({ repo: server.url, name: "c", version }, "greedy");
  // THEN the platform's chart is still cached for every namespace
  const before = downloads();
  await fetch(platformChart, "quiet");
  assert.equal(downloads(), before);
});

test("a wrong digest pin is refused without dropping the copy other namespaces use; a republished chart is refetched", async (t) => {
  // GIVEN a repository whose chart 1.0.0 one namespace fetched, and which is then published again with other bytes
  let published = chartBytes;
  const server = await serve(
    t,
    repository(
      () => helmIndex(),
      () => published,
    ),
  );
  const downloads = () => server.requests.filter((request) => request.endsWith(".tgz")).length;
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url] });
  const chart = { repo: server.url, name: "c", version: "1.0.0" };
  await fetch(chart, "quiet");
  // WHEN another namespace pins a digest no version has
  const error = await rejection(fetch({ ...chart, digest: `sha256:${"0".repeat(64)}` }, "pinning"));
  // THEN it is refused, and the first namespace's copy is still kept (one fetch to look, none after)
  assert.equal(error.reason, "ChartDigestMismatch");
  const before = downloads();
  assert.deepEqual(Buffer.from(await fetch(chart, "quiet")), chartBytes);
  assert.equal(downloads(), before, "the quiet namespace's chart came from the cache");
  // AND a pin of the republished bytes gets them, though the kept copy is older
  published = Buffer.from("republished chart");
  assert.deepEqual(Buffer.from(await fetch({ ...chart, digest: sha256(published) }, "pinning")), published);
});

test("5xx, 429 and an unreachable source are transient", async (t) => {
  for (const status of [503, 429]) {
    const server = await serve(t, (_request, response) => response.writeHead(status).end("busy"));
    const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url] });
    const error = await rejection(fetch({ repo: server.url, name: "c", version: "1.0.0" }, "ns"));
    assert.equal(error.transient, true, `${status} is transient`);
    assert.equal(error.reason, "ChartFetchFailed");
  }
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: ["oci://127.0.0.1:1/"] });
  const error = await rejection(fetch({ oci: "oci://127.0.0.1:1/charts/c", version: "1.0.0" }, "ns"));
  assert.equal(error.transient, true);
  assert.match(error.message, /127\.0\.0\.1:1 cannot be reached \(ECONNREFUSED\)/);
});

test("requests each answered just in time cannot stretch a fetch past its own deadline", async (t) => {
  // GIVEN a repository that answers the index and the chart each just before the request's 1.5 s, and that
  // redirects the chart twice, each hop as late
  const server = await serve(t, (request, response) => {
    const later = (answer: () => void) => setTimeout(answer, 1_000);
    if (request.url === "/index.yaml") later(() => response.end(helmIndex("hop-1")));
    else if (request.url === "/hop-1") later(() => response.writeHead(302, { location: "/hop-2" }).end());
    else if (request.url === "/hop-2") later(() => response.writeHead(302, { location: "/c-1.0.0.tgz" }).end());
    else later(() => response.end(chartBytes));
  });
  const fetch = chartSource({
    readConfigMap: noConfigMaps,
    allowedSources: [server.url],
    http: { timeoutMs: 1_500, fetchTimeoutMs: 2_500 },
  });
  // WHEN it is fetched
  const error = await rejection(fetch({ repo: server.url, name: "c", version: "1.0.0" }, "ns"));
  // THEN the chart's request and its redirects share one clock, cut at the fetch's deadline (not 1.5 s a hop)
  assert.equal(error.transient, true);
  assert.match(error.message, /did not answer before the fetch's deadline of 2\.5 s/);
});

test("a slow-drip source times out (transient) instead of holding the fetch", async (t) => {
  // GIVEN a server that answers a byte every 200 ms, forever
  const server = await serve(t, (_request, response) => {
    response.writeHead(200);
    const drip = setInterval(() => response.write("a"), 200);
    response.on("close", () => clearInterval(drip));
  });
  const fetch = chartSource({
    readConfigMap: noConfigMaps,
    allowedSources: [server.url],
    http: { timeoutMs: 1500 },
  });
  const started = performance.now();
  const error = await rejection(fetch({ repo: server.url, name: "c", version: "1.0.0" }, "ns"));
  // THEN it ends at the total deadline, although bytes kept coming
  assert.ok(performance.now() - started < 5000);
  assert.equal(error.transient, true);
  assert.match(error.message, /did not answer in 1\.5 s/);
});

test("an index over the cap is refused while reading; a large valid index is read", async (t) => {
  const huge = Buffer.alloc(17 * 1024 * 1024, "#");
  const server = await serve(t, (request, response) => {
    if (request.url === "/huge/index.yaml") return void response.end(huge);
    response.end(largeHelmIndex);
  });
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url] });
  const error = await rejection(fetch({ repo: `${server.url}/huge`, name: "c", version: "1.0.0" }, "ns"));
  assert.equal(error.transient, false);
  assert.match(error.message, /index\.yaml from 127\.0\.0\.1:\d+ is .*more than the limit of 16777216/);

  // GIVEN a 10 MiB index in Helm's layout (the yaml library alone needs seconds for it)
  const found = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url] });
  // WHEN a chart it lists is fetched: a URL the index gives for chart150 1.59.0, which the server answers with the
  // index itself (it is bytes)
  const bytes = await found({ repo: server.url, name: "chart150", version: "1.59.0" }, "ns");
  // THEN it is found
  assert.ok(bytes.length > 0);
});

test("a large index is scanned in pieces, giving the event loop a turn at least every 65,536 lines", async () => {
  // GIVEN the 10 MiB index and a counter of event-loop turns (parsing it whole holds the loop ~4 s here)
  let turns = 0;
  let counting = true;
  const turn = () => {
    turns++;
    if (counting) setImmediate(turn);
  };
  setImmediate(turn);
  // WHEN the entry of its last chart is looked up (no I/O: any turn is the scan's own yield)
  const listing = await findIndexEntry(largeHelmIndex, "chart299", "1.59.0");
  counting = false;
  // THEN the entry is found, and the scan yielded as often as the lines before it require (a count, not a time:
  // how long each piece takes is bench/'s business)
  assert.equal(listing?.entry?.version, "1.59.0");
  const linesBefore = largeHelmIndex.slice(0, largeHelmIndex.indexOf("  chart299:")).split("\n").length;
  assert.ok(linesBefore > 3 * 65_536);
  assert.ok(turns >= Math.floor(linesBefore / 65_536), `${turns} turns over ${linesBefore} lines`);
});

test("redirects are followed by hand and never into private or link-local addresses the platform did not name", async (t) => {
  // GIVEN an internal service on loopback, reachable as "localhost", that the allow-list does not name
  const internal = await serve(t, (_request, response) => response.end("internal"));
  const targets = [`http://169.254.169.254/latest/meta-data/`, `http://localhost:${internal.port}/secret`];
  for (const target of targets) {
    const server = await serve(t, (_request, response) => response.writeHead(302, { location: target }).end());
    const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [server.url] });
    // WHEN the allowed repository redirects there
    const error = await rejection(fetch({ repo: server.url, name: "c", version: "1.0.0" }, "ns"));
    // THEN the fetch is refused, permanently
    assert.equal(error.transient, false, error.message);
    assert.match(error.message, /private, loopback or link-local address; not reached/);
  }
  assert.deepEqual(internal.requests, []);
});

test("a host the platform lists is reached on the ports its entries name, never on another of its services", async (t) => {
  // GIVEN an allowed repository on a private address, and another service on the same host
  const internal = await serve(t, (_request, response) => response.end("internal"));
  const server = await serve(t, (_request, response) =>
    response.writeHead(302, { location: `http://127.0.0.1:${internal.port}/admin` }).end(),
  );
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`oci://${server.host}/`] });
  // WHEN the registry points the operator at that other port (a repository may not leave its prefix at all, below)
  const error = await rejection(fetch({ oci: `oci://${server.host}/charts/c`, version: "1.0.0" }, "ns"));
  // THEN the fetch is refused, permanently, and the other service sees nothing
  assert.equal(error.transient, false, error.message);
  assert.match(error.message, /is not a port the platform's chart sources name for 127\.0\.0\.1; not reached/);
  assert.deepEqual(internal.requests, []);
});

test("a repository's index and redirects stay within the namespace's sources on the hosts they name", async (t) => {
  // GIVEN one host serving the platform's charts and two teams' repositories; namespace team-a may use its own
  const platformOnly = Buffer.from("the platform's own chart");
  const server = await serve(t, (request, response) => {
    const index = (url: string) => response.end(helmIndex(url));
    if (request.url === "/team-a/index.yaml") index("/platform/c-1.0.0.tgz");
    else if (request.url === "/team-a/moved/index.yaml")
      response.writeHead(302, { location: "/team-b/index.yaml" }).end();
    // The same host with the root's dot, which DNS and the server take for the same one
    else if (request.url === "/team-a/dot/index.yaml")
      index(`http://127.0.0.1.:${request.socket.localPort}/team-b/c.tgz`);
    else if (request.url === "/team-a/ok/index.yaml") index("/team-a/ok/c-1.0.0.tgz");
    else if (request.url === "/team-a/ok/c-1.0.0.tgz") response.end(chartBytes);
    else if (request.url === "/team-b/index.yaml") index("/team-b/c-1.0.0.tgz");
    else if (request.url === "/team-b/c-1.0.0.tgz") response.end(chartBytes);
    else if (request.url === "/platform/c-1.0.0.tgz") response.end(platformOnly);
    else response.writeHead(404).end();
  });
  const fetch = chartSource({
    readConfigMap: noConfigMaps,
    allowedSources: [`${server.url}/team-a/`, `${server.url}/team-b/`],
    namespaceSources: (namespace) => Promise.resolve(namespace === "team-a" ? `${server.url}/team-a/` : undefined),
  });
  // WHEN team-a's repository lists a chart of the platform's path, or redirects to team-b's repository
  const listed = await rejection(fetch({ repo: `${server.url}/team-a`, name: "c", version: "1.0.0" }, "team-a"));
  const moved = await rejection(fetch({ repo: `${server.url}/team-a/moved`, name: "c", version: "1.0.0" }, "team-a"));
  const dot = await rejection(fetch({ repo: `${server.url}/team-a/dot`, name: "c", version: "1.0.0" }, "team-a"));
  // THEN each is refused, naming the URL and the namespace's sources, and nothing outside them is asked for
  assert.equal(listed.reason, "ChartSourceNotAllowed");
  assert.equal(listed.outsideSpec, true, "looked at again in the slow lane: widening the annotation heals it");
  assert.equal(dot.reason, "ChartSourceNotAllowed", dot.message);
  assert.match(
    listed.message,
    /index\.yaml lists the chart at http:\/\/127\.0\.0\.1:\d+\/platform\/c-1\.0\.0\.tgz, outside the chart sources namespace team-a may use/,
  );
  assert.equal(moved.reason, "ChartSourceNotAllowed");
  assert.match(
    moved.message,
    /team-a\/moved\/index\.yaml redirects to http:\/\/127\.0\.0\.1:\d+\/team-b\/index\.yaml, outside/,
  );
  assert.equal(server.requests.filter((r) => r.includes("/platform/") || r.includes("/team-b/")).length, 0);
  // AND a repository within them is fetched; a namespace without an annotation may use team-b's path
  assert.deepEqual(
    Buffer.from(await fetch({ repo: `${server.url}/team-a/ok`, name: "c", version: "1.0.0" }, "team-a")),
    chartBytes,
  );
  await fetch({ repo: `${server.url}/team-a/moved`, name: "c", version: "1.0.0" }, "shop");
});

/** A registry whose manifest lists `layer` for a blob it serves as `blob`. */
function registry(
  blob: Buffer,
  layerDigest: string,
  extra?: (request: IncomingMessage, response: ServerResponse) => boolean,
) {
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      layers: [{ mediaType: chartLayerMediaType, digest: layerDigest, size: blob.length }],
    }),
  );
  return (request: IncomingMessage, response: ServerResponse) => {
    if (extra?.(request, response)) return;
    if (request.url?.includes("/manifests/")) {
      response.writeHead(200, { "docker-content-digest": sha256(manifest) }).end(manifest);
    } else if (request.url?.includes("/blobs/")) response.end(blob);
    else response.writeHead(404).end();
  };
}

test("an OCI blob is checked against its descriptor's digest", async (t) => {
  const good = await serve(t, registry(chartBytes, sha256(chartBytes)));
  const fetchGood = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`oci://${good.host}/`] });
  assert.deepEqual(
    Buffer.from(await fetchGood({ oci: `oci://${good.host}/charts/c`, version: "1.0.0" }, "ns")),
    chartBytes,
  );

  const tampered = Buffer.from("a packed chart, as far as the fetcher cares!");
  const bad = await serve(t, registry(tampered, sha256(chartBytes)));
  const fetchBad = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`oci://${bad.host}/`] });
  const error = await rejection(fetchBad({ oci: `oci://${bad.host}/charts/c`, version: "1.0.0" }, "ns"));
  assert.equal(error.reason, "ChartDigestMismatch");
  assert.equal(error.transient, false);
});

test("a manifest whose bytes do not match the registry's digest is refused", async (t) => {
  const server = await serve(t, (request, response) => {
    if (request.url?.includes("/manifests/")) {
      response.writeHead(200, { "docker-content-digest": sha256(Buffer.from("other")) }).end("{}");
    } else response.writeHead(404).end();
  });
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`oci://${server.host}/`] });
  const error = await rejection(fetch({ oci: `oci://${server.host}/charts/c`, version: "1.0.0" }, "ns"));
  assert.equal(error.reason, "ChartDigestMismatch");
});

test("a manifest larger than a chart's needs is refused while reading, before it is parsed", async (t) => {
  // GIVEN a registry whose manifest lists the chart's layer beside 1 MiB of nested arrays
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      layers: [{ mediaType: chartLayerMediaType, digest: sha256(chartBytes), size: chartBytes.length }],
      annotations: { x: "[".repeat(512 * 1024) + "]".repeat(512 * 1024) },
    }),
  );
  const server = await serve(t, (request, response) => {
    if (request.url?.includes("/manifests/")) response.end(manifest);
    else if (request.url?.includes("/blobs/")) response.end(chartBytes);
    else response.writeHead(404).end();
  });
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`oci://${server.host}/`] });
  // WHEN the chart is fetched THEN it is refused, permanently, naming the limit, and the blob is never asked for
  const error = await rejection(fetch({ oci: `oci://${server.host}/charts/c`, version: "1.0.0" }, "ns"));
  assert.equal(error.transient, false);
  assert.match(error.message, /the manifest from 127\.0\.0\.1:\d+ is \d+ bytes, more than the limit of 65536/);
  assert.equal(server.requests.filter((r) => r.includes("/blobs/")).length, 0);
});

test("a token realm on another host is refused; on the registry's own host it is used", async (t) => {
  // GIVEN a "token service" on another host (localhost, where the registry is 127.0.0.1)
  const elsewhere = await serve(t, (_request, response) => response.end(JSON.stringify({ token: "t" })));
  const challenge = (realm: string) => (request: IncomingMessage, response: ServerResponse) => {
    if (request.url?.startsWith("/token")) return (void response.end(JSON.stringify({ token: "t" })), true);
    if (request.headers.authorization === "Bearer t") return false;
    response.writeHead(401, { "www-authenticate": `Bearer realm="${realm}",service="r",scope="s"` }).end();
    return true;
  };
  const foreign = await serve(
    t,
    registry(chartBytes, sha256(chartBytes), challenge(`http://localhost:${elsewhere.port}/token`)),
  );
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`oci://${foreign.host}/`] });
  const error = await rejection(fetch({ oci: `oci://${foreign.host}/charts/c`, version: "1.0.0" }, "ns"));
  assert.match(error.message, /token to localhost:\d+, another host/);
  assert.deepEqual(elsewhere.requests, []);

  // The realm names the registry's own address, known once it listens.
  const ownUrl: { value?: string } = {};
  const own = await serve(
    t,
    registry(chartBytes, sha256(chartBytes), (request, response) =>
      challenge(`${ownUrl.value ?? ""}/token`)(request, response),
    ),
  );
  ownUrl.value = own.url;
  const fetchOwn = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`oci://${own.host}/`] });
  assert.deepEqual(
    Buffer.from(await fetchOwn({ oci: `oci://${own.host}/charts/c`, version: "1.0.0" }, "ns")),
    chartBytes,
  );
  assert.ok(own.requests.some((r) => r.startsWith("GET /token?")));
});

test("a token that no header may carry is refused, permanently, naming the token service", async (t) => {
  // GIVEN a registry whose own token service answers a token with a line break (a header injection)
  const ownUrl: { value?: string } = {};
  const own = await serve(
    t,
    registry(chartBytes, sha256(chartBytes), (request, response) => {
      if (request.url?.startsWith("/token"))
        return (void response.end(JSON.stringify({ token: "t\r\nX-Evil: 1" })), true);
      response.writeHead(401, { "www-authenticate": `Bearer realm="${ownUrl.value ?? ""}/token"` }).end();
      return true;
    }),
  );
  ownUrl.value = own.url;
  const fetch = chartSource({ readConfigMap: noConfigMaps, allowedSources: [`oci://${own.host}/`] });
  // WHEN the chart is fetched THEN the token is refused as the service's fault, not retried as a network error
  const error = await rejection(fetch({ oci: `oci://${own.host}/charts/c`, version: "1.0.0" }, "ns"));
  assert.match(error.message, /token service answered a token that is not printable ASCII/);
  assert.equal(error.transient, false);
});

test("a registry's redirects stay within the namespace's sources on the hosts they name", async (t) => {
  // GIVEN an "internal" registry, reachable as localhost, whose platform/ path the platform lists for its own chart
  const secret = Buffer.from("the platform's own chart");
  const internal = await serve(t, registry(secret, sha256(secret)), "localhost");
  // AND team-a's registry (127.0.0.1), which redirects the manifest (and, under blob-only/, just the chart layer,
  // whose digest it may know) to the internal one's platform/ path
  const manifestOf = (blob: Buffer) =>
    JSON.stringify({
      schemaVersion: 2,
      layers: [{ mediaType: chartLayerMediaType, digest: sha256(blob), size: blob.length }],
    });
  const tenant = await serve(t, (request, response) => {
    const [, repository = "", kind = "", reference = ""] =
      /^\/v2\/(.+)\/(manifests|blobs)\/(.+)$/.exec(request.url ?? "") ?? [];
    const toInternal = () =>
      response.writeHead(302, { location: `${internal.url}/v2/platform/secret/${kind}/${reference}` }).end();
    if (repository === "team-a/app") toInternal();
    else if (repository === "team-a/blob-only" && kind === "manifests") response.end(manifestOf(secret));
    else if (repository === "team-a/blob-only") toInternal();
    else response.writeHead(404).end();
  });
  const fetch = chartSource({
    readConfigMap: noConfigMaps,
    allowedSources: [`oci://${tenant.host}/`, `oci://${internal.host}/platform/`],
    namespaceSources: (namespace) => Promise.resolve(namespace === "team-a" ? `oci://${tenant.host}/` : undefined),
  });
  for (const repository of ["team-a/app", "team-a/blob-only"]) {
    // WHEN an instance in team-a fetches a chart of team-a's registry
    const error = await rejection(fetch({ oci: `oci://${tenant.host}/${repository}`, version: "1.0.0" }, "team-a"));
    // THEN it is refused, as a repository's redirect outside the namespace's sources is, naming the redirect
    assert.equal(error.reason, "ChartSourceNotAllowed", error.message);
    assert.equal(error.outsideSpec, true, "looked at again in the slow lane: widening the annotation heals it");
    assert.match(
      error.message,
      /redirects to http:\/\/localhost:\d+\/v2\/platform\/secret\/.*, outside the chart sources namespace team-a may use/,
    );
  }
  // AND the internal registry was never asked
  assert.deepEqual(internal.requests, []);
  // AND a namespace without an annotation, which may use the platform/ path, follows the same redirects
  assert.deepEqual(
    Buffer.from(await fetch({ oci: `oci://${tenant.host}/team-a/app`, version: "1.0.0" }, "shop")),
    secret,
  );
});

test("a token realm stays within the namespace's sources, and a token comes from the host asked for it", async (t) => {
  // GIVEN an "internal" service, reachable as localhost, whose platform/ path the platform lists (a token service
  // is an HTTP URL: an https:// or http:// entry covers it, an oci:// one does not)
  const internal = await serve(
    t,
    (request, response) => {
      if (request.url?.startsWith("/internal-api")) response.end(JSON.stringify({ token: "INTERNAL-SECRET-FIELD" }));
      else if (request.url?.startsWith("/platform/token")) response.end(JSON.stringify({ token: "internal" }));
      else response.writeHead(404).end();
    },
    "localhost",
  );
  // AND team-a's registry (127.0.0.1): under redirecting/ its realm is its own /token, which redirects to the internal
  // service; under platform-realm/ its realm is the internal service's platform/ path
  const authorizations: string[] = [];
  const tenant = await serve(
    t,
    registry(chartBytes, sha256(chartBytes), (request, response) => {
      if (request.headers.authorization) authorizations.push(request.headers.authorization);
      if (request.url?.startsWith("/token")) {
        return (void response.writeHead(302, { location: `${internal.url}/internal-api/anything` }).end(), true);
      }
      if (request.headers.authorization === "Bearer internal") return false;
      const realm = request.url?.includes("/redirecting/") ? `${tenant.url}/token` : `${internal.url}/platform/token`;
      response.writeHead(401, { "www-authenticate": `Bearer realm="${realm}"` }).end();
      return true;
    }),
  );
  const fetch = chartSource({
    readConfigMap: noConfigMaps,
    allowedSources: [`oci://${tenant.host}/`, `${internal.url}/platform/`],
    namespaceSources: (namespace) => Promise.resolve(namespace === "team-a" ? `oci://${tenant.host}/` : undefined),
  });
  // WHEN the registry's own token service redirects to the internal service (a namespace without an annotation too)
  for (const namespace of ["team-a", "shop"]) {
    const error = await rejection(fetch({ oci: `oci://${tenant.host}/redirecting/c`, version: "1.0.0" }, namespace));
    // THEN the fetch is refused, naming the redirect
    assert.equal(error.reason, "ChartSourceNotAllowed", error.message);
    assert.match(error.message, /token service at 127\.0\.0\.1:\d+ redirects to localhost:\d+/);
  }
  // WHEN team-a's registry sends for a token to the internal service's path, which the platform lists
  const error = await rejection(fetch({ oci: `oci://${tenant.host}/platform-realm/c`, version: "1.0.0" }, "team-a"));
  // THEN it is refused, as outside the namespace's sources
  assert.equal(error.reason, "ChartSourceNotAllowed", error.message);
  assert.equal(error.outsideSpec, true);
  assert.match(error.message, /token to localhost:\d+, another host .*namespace team-a may use/);
  // AND the internal service was never asked, and no token reached the registry
  assert.deepEqual(internal.requests, []);
  assert.deepEqual(authorizations, []);
  // AND a namespace without an annotation gets its token from the platform's listed path
  assert.deepEqual(
    Buffer.from(await fetch({ oci: `oci://${tenant.host}/platform-realm/c`, version: "1.0.0" }, "shop")),
    chartBytes,
  );
  assert.deepEqual(internal.requests, ["GET /platform/token"]);
});

test("a ConfigMap's chart is read whole only when its uid or resourceVersion changed; each fetch asks its version", async () => {
  // GIVEN a chart's ConfigMap, and a fetcher that may ask for its version alone (the operator's)
  let stored: { metadata: { uid: string; resourceVersion: string }; binaryData: Record<string, string> } | undefined;
  const store = (uid: string, resourceVersion: string, text: string) =>
    (stored = {
      metadata: { uid, resourceVersion },
      binaryData: { "chart.tgz": Buffer.from(text).toString("base64") },
    });
  let versionBehind = false;
  const reads = { whole: 0, version: 0 };
  const fetch = chartSource({
    readConfigMap: () => {
      reads.whole++;
      return Promise.resolve(stored);
    },
    readConfigMapVersion: () => {
      reads.version++;
      return Promise.resolve(versionBehind ? undefined : stored && { metadata: stored.metadata });
    },
  });
  const chart = { configMap: "web-chart" };
  const text = async () => Buffer.from(await fetch(chart, "shop")).toString();
  store("u1", "1", "chart A");
  // WHEN it is fetched three times, unchanged
  // THEN it is read whole once, and its version each time
  for (let i = 0; i < 3; i++) assert.equal(await text(), "chart A");
  assert.deepEqual(reads, { whole: 1, version: 3 });
  // WHEN it is edited in place, then replaced by a namesake
  store("u1", "2", "chart B");
  assert.equal(await text(), "chart B");
  store("u2", "1", "chart C");
  assert.equal(await text(), "chart C");
  // THEN each change is read whole once
  assert.equal(await text(), "chart C");
  assert.deepEqual(reads, { whole: 3, version: 6 });
  // WHEN it is deleted: the fetch says so (retried), and its copy is gone
  stored = undefined;
  const error = await rejection(fetch(chart, "shop"));
  assert.equal(error.reason, "ChartFetchFailed");
  assert.equal(error.transient, true);
  assert.match(error.message, /ConfigMap shop\/web-chart does not exist/);
  // WHEN it is created again, while the cheap read cannot see it yet (the watch cache a moment behind)
  store("u3", "1", "chart D");
  versionBehind = true;
  // THEN the whole read settles it, every time until the version can be read, and from then on it is kept
  assert.equal(await text(), "chart D");
  assert.equal(await text(), "chart D");
  versionBehind = false;
  assert.equal(await text(), "chart D");
  assert.deepEqual(reads, { whole: 6, version: 10 });
  // AND a pinned digest still holds for a kept copy
  const pinned = await rejection(fetch({ ...chart, digest: `sha256:${"0".repeat(64)}` }, "shop"));
  assert.equal(pinned.reason, "ChartDigestMismatch");
  // AND without the version port (the provider's preview) every fetch reads the ConfigMap whole
  let wholeReads = 0;
  const plain = chartSource({
    readConfigMap: () => {
      wholeReads++;
      return Promise.resolve(stored);
    },
  });
  await plain(chart, "shop");
  await plain(chart, "shop");
  assert.equal(wholeReads, 2);
});
