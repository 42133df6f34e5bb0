/**
 * Chart sources over HTTPS, as real repositories serve them: TLS with server name indication and the connection's
 * own address check (chart/http-get.ts) on a host name, trusting a platform's private CA the way Node does
 * (NODE_EXTRA_CA_CERTS, read at start: so each fetch runs in a Node process of its own), and refusing a server
 * whose certificate no trusted CA signed.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { createCertificateAuthority, createServingCertificate } from "../../../operator/admission/certificates.ts";

const chart = Buffer.from("a packed chart, as far as the fetcher cares");
const sources = pathToFileURL(path.resolve(import.meta.dirname, "../../../chart/sources.ts")).href;

/** Fetches `chart` 1.0.0 from `repo` in a new Node process with `env`: its digest, or the error's reason and message. */
async function fetchInProcess(repo: string, env: NodeJS.ProcessEnv): Promise<string> {
  const script = `
    import { chartSource, chartDigest } from ${JSON.stringify(sources)};
    const fetch = chartSource({ readConfigMap: async () => undefined, allowedSources: [${JSON.stringify(repo)}] });
    try {
      console.log(chartDigest(await fetch({ repo: ${JSON.stringify(repo)}, name: "c", version: "1.0.0" }, "ns")));
    } catch (error) {
      console.log(JSON.stringify({ reason: error.reason, transient: error.transient, message: error.message }));
    }`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { env });
  return stdout.trim();
}

test("a repository over HTTPS is fetched when a trusted CA signed its certificate, refused otherwise", async (t) => {
  // GIVEN a repository on https://localhost whose certificate a private CA signed
  const nowMs = Date.now();
  const ca = await createCertificateAuthority({ validityMs: 3_600_000, nowMs, commonName: "charts-ca" });
  const serving = await createServingCertificate({ ca, hosts: ["localhost"], validityMs: 3_600_000, nowMs });
  const names: string[] = [];
  const server = createServer({ cert: serving.cert, key: serving.key }, (request, response) => {
    names.push((request.socket as { servername?: string }).servername ?? "");
    if (request.url === "/charts/index.yaml") {
      response.end(stringify({ apiVersion: "v1", entries: { c: [{ name: "c", version: "1.0.0", urls: ["c.tgz"] }] } }));
    } else if (request.url === "/charts/c.tgz") response.end(chart);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const repo = `https://localhost:${(server.address() as AddressInfo).port}/charts/`;
  const dir = mkdtempSync(path.join(tmpdir(), "myapp-https-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const caFile = path.join(dir, "ca.pem");
  writeFileSync(caFile, ca.cert);
  const base = { PATH: process.env.PATH ?? "" };

  // WHEN the platform's CA is trusted THEN the chart is fetched, over TLS to the name the source gives
  const digest = `sha256:${createHash("sha256").update(chart).digest("hex")}`;
  assert.equal(await fetchInProcess(repo, { ...base, NODE_EXTRA_CA_CERTS: caFile }), digest);
  assert.deepEqual([...new Set(names)], ["localhost"], "the TLS handshake named the host");

  // WHEN it is not THEN the fetch is refused, saying why, and no chart is read
  const before = names.length;
  const refused = JSON.parse(await fetchInProcess(repo, base)) as { reason: string; message: string };
  assert.equal(refused.reason, "ChartFetchFailed");
  assert.match(
    refused.message,
    /cannot be fetched: localhost:\d+'s TLS certificate is not signed by a CA the operator trusts: Node's, and those of the file NODE_EXTRA_CA_CERTS names \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)$/,
  );
  assert.equal(names.length, before, "no request got past the handshake");

  // WHEN the CA is trusted but the source names the server otherwise THEN that is what the message says
  const byAddress = repo.replace("localhost", "127.0.0.1");
  const misnamed = JSON.parse(await fetchInProcess(byAddress, { ...base, NODE_EXTRA_CA_CERTS: caFile })) as {
    message: string;
  };
  assert.match(misnamed.message, /TLS certificate is not valid for 127\.0\.0\.1 \(ERR_TLS_CERT_ALTNAME_INVALID\)$/);
});
