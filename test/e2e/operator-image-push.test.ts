/**
 * `npm run image -- --push REGISTRY/NAME:TAG` against a real registry: the CNCF distribution registry (Debian's
 * docker-registry, installed by the image tools like buildah and skopeo) on 127.0.0.1, on plain HTTP.
 *
 * - the built image (or the cached one) is pushed with skopeo, daemonless, and the registry's answer is read back
 *   with `skopeo inspect`: the same manifest digest the build recorded (nothing converted on the way), and the
 *   image's own labels;
 * - without --no-tls-verify the same push is refused (TLS is verified unless asked otherwise);
 * - the command line prints the reference to give MyAppOperator's `image`, pinned to that digest.
 *
 * Needs root on a machine without the tools (apt-get); no cluster. `npm test -- test/e2e/operator-image-push.test.ts`.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { freePort } from "../../tools/lib/operator-launcher.ts";
import { buildOperatorImage } from "../../tools/lib/image-build.ts";
import { pushOperatorImage } from "../../tools/lib/image-push.ts";
import { ensureImageTools } from "../../tools/lib/image-tools.ts";
import { repoRoot } from "../../tools/lib/paths.ts";
import { progress } from "../../tools/lib/progress.ts";
import { run } from "../../tools/lib/run.ts";

const step = progress("operator-image-push");
const minutes = (n: number) => n * 60_000;

describe("the operator image pushed to a registry", { timeout: minutes(15) }, () => {
  it("lands in a local registry with the digest it was built with, and reads back with skopeo inspect", async (t) => {
    // --- the tools (one apt-get run on a new machine) and the image, built or from the cache ---
    const tools = await ensureImageTools(["buildah", "skopeo", "docker-registry"], step);
    const image = await buildOperatorImage(step);

    // --- a real registry on 127.0.0.1, plain HTTP, storage in a throwaway directory ---
    const dir = mkdtempSync(path.join(os.tmpdir(), "myapp-registry-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const config = path.join(dir, "config.yml");
    writeFileSync(
      config,
      [
        "version: 0.1",
        "log: { level: warn }",
        `storage: { filesystem: { rootdirectory: ${JSON.stringify(path.join(dir, "data"))} } }`,
        `http: { addr: "127.0.0.1:${port}" }`,
        "",
      ].join("\n"),
    );
    const registry = spawn(tools["docker-registry"], ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
    t.after(() => stop(registry));
    let registryLog = "";
    registry.stderr?.on("data", (chunk: Buffer) => (registryLog = (registryLog + chunk.toString()).slice(-4000)));
    await waitForRegistry(`http://127.0.0.1:${port}/v2/`, () => registryLog);

    const destination = `127.0.0.1:${port}/platform/myapp-operator:${image.tag}`;

    // --- TLS is verified unless asked: the plain-HTTP registry is refused by default ---
    await assert.rejects(pushOperatorImage(image, destination, { step }), /HTTP response to HTTPS client|https/i);

    // --- the push, asked to skip TLS for this local registry ---
    const pushed = await pushOperatorImage(image, destination, { tlsVerify: false, step });
    assert.equal(pushed.digest, image.digest, "the registry stores the manifest the build wrote, byte for byte");
    assert.equal(pushed.pinned, `127.0.0.1:${port}/platform/myapp-operator@${image.digest}`);

    // --- read back: the raw manifest hashes to that digest, and the image carries its labels ---
    const inspect = (...args: string[]) =>
      run(tools.skopeo, ["inspect", "--tls-verify=false", ...args, `docker://${destination}`]);
    const raw = (await inspect("--raw")).stdout;
    assert.equal(`sha256:${createHash("sha256").update(raw).digest("hex")}`, image.digest);
    const manifest = JSON.parse(raw) as { mediaType?: string; layers: { mediaType: string }[] };
    assert.equal(manifest.mediaType, "application/vnd.oci.image.manifest.v1+json");
    assert.ok(manifest.layers.every((layer) => layer.mediaType.endsWith("+gzip")));
    const details = JSON.parse((await inspect()).stdout) as { Digest: string; Labels: Record<string, string> };
    assert.equal(details.Digest, image.digest);
    assert.equal(details.Labels["org.myapp.base.node"], image.nodeVersion);

    // --- the command line: the same push, and the reference to give `image` on stdout ---
    const cli = await run(
      process.execPath,
      [path.join(repoRoot, "tools/image.ts"), "--push", destination, "--no-tls-verify"],
      { cwd: repoRoot },
    );
    assert.equal(cli.stdout.trim(), pushed.pinned);
  });
});

/** Waits until the registry answers its API root (`GET /v2/` is 200 without auth). */
async function waitForRegistry(url: string, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the registry did not answer ${url} within 30 s:\n${log()}`);
}

/** Stops the registry this test started, by its pid, and waits for it to exit. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
