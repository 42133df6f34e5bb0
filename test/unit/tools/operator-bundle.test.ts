import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { ParseThread, parseWorkerUrl } from "../../../chart/render-yaml-thread.ts";
import { bundleOperator } from "../../../tools/lib/operator-bundle.ts";

describe("bundleOperator", () => {
  it("is one file, and its YAML parsing thread one beside it, that run without node_modules and carry nothing of Pulumi", async (t) => {
    // GIVEN a fresh bundle, copied to a directory with no node_modules anywhere above it
    const outDir = mkdtempSync(path.join(os.tmpdir(), "operator-bundle-"));
    t.after(() => rmSync(outDir, { recursive: true, force: true }));
    const bundle = await bundleOperator(outDir);
    const alone = mkdtempSync(path.join(os.tmpdir(), "operator-alone-"));
    t.after(() => rmSync(alone, { recursive: true, force: true }));
    copyFileSync(bundle.file, path.join(alone, "myapp-operator.mjs"));
    copyFileSync(bundle.parseWorker, path.join(alone, "render-yaml-worker.mjs"));
    // WHEN it runs THEN it loads every module it needs from itself and prints the operator's usage
    const help = execFileSync(process.execPath, [path.join(alone, "myapp-operator.mjs"), "--help"], {
      cwd: alone,
      encoding: "utf8",
      env: { PATH: process.env.PATH },
    });
    assert.match(help, /--leader-elect/);
    // AND its YAML parsing thread, started as the operator starts it (found beside it by parseWorkerUrl), parses a
    // document and refuses a bad one
    const thread = new ParseThread({
      workerUrl: parseWorkerUrl(pathToFileURL(path.join(alone, "myapp-operator.mjs")).href),
    });
    t.after(() => thread.close());
    assert.deepEqual(await thread.parse("items: [1, 2]\n", 1024), { value: { items: [1, 2] }, expandedBytes: 0 });
    assert.match(JSON.stringify(await thread.parse("a: 1\na: 2\n", 1024)), /duplicated mapping key/);
    // AND the operator's dependencies are in it, Pulumi's are not, and each has its license beside it
    for (const name of ["undici", "yaml", "pino", "prom-client", "zod"]) {
      assert.ok(
        bundle.packages.some((p) => p.startsWith(`${name}@`)),
        `${name} is bundled`,
      );
    }
    assert.ok(!bundle.packages.some((p) => p.startsWith("@pulumi/")), bundle.packages.join(", "));
    const source = readFileSync(bundle.file, "utf8");
    assert.doesNotMatch(source, /@pulumi\/pulumi/);
    assert.doesNotMatch(readFileSync(bundle.parseWorker, "utf8"), /@pulumi\/pulumi|[^\x00-\x7f]/u);
    // AND only the parts of undici and zod the operator runs: every process parses (and holds) all of its source
    const bundled = [...source.matchAll(/^\/\/ (node_modules\/\S+)$/gm)].map((match) => match[1] ?? "");
    assert.ok(bundled.includes("node_modules/undici/lib/dispatcher/agent.js"), "undici's Agent is bundled");
    const unused =
      /^node_modules\/undici\/(index\.js|lib\/(web\/fetch\/index\.js|web\/websocket\/|web\/eventsource\/|mock\/|cache\/))/;
    assert.deepEqual(
      bundled.filter((file) => unused.test(file)),
      [],
      "undici's index, and with it fetch, WebSocket, EventSource, mocks and cache stores, are not bundled",
    );
    // (the locales' index may stand in it as an empty module: what it re-exports is gone)
    const locales = bundled.filter((file) => file.startsWith("node_modules/zod/v4/locales/"));
    assert.ok(locales.includes("node_modules/zod/v4/locales/en.js"), "zod's default locale is bundled");
    assert.deepEqual(
      locales.filter((file) => !/\/(en|index)\.js$/.test(file)),
      [],
      "of zod's locales only the default one is bundled",
    );
    // AND it is ASCII, so V8 holds its source as one byte per character, not two
    assert.doesNotMatch(source, /[^\x00-\x7f]/u);
    const licenses = readFileSync(bundle.licenses, "utf8");
    for (const p of bundle.packages) assert.ok(licenses.includes(`${p} (`), `${p} has a license section`);
  });
});
