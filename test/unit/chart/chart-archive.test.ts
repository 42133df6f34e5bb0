/**
 * The chart helm is given: rebuilt from what the operator read, refused when a values.schema.json would make helm
 * load from outside it (read as Helm reads the archive: subchart directories and archives, `\` separators, a
 * byte-order mark), bounded in what it unpacks; and archives that Go's tar reader and tar-stream read differently
 * reach helm only as the operator read them: the real helm, given them through the renderer, makes no request.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { extract } from "tar-stream";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { ChartRenderError, helmRenderer } from "../../../chart/index.ts";
import { maxSchemaBytes, maxUnpackedBytes, rebuildChart } from "../../../chart/chart-archive.ts";
import { chartArchive as archive } from "../../support/chart-archive.ts";
import { helmBinary } from "../../support/helm.ts";

const chartYaml = "apiVersion: v2\nname: app\nversion: 0.1.0\n";
const template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
const schema = (reference: object) => JSON.stringify({ type: "object", properties: { x: reference } });

const problemOf = async (chart: Uint8Array) => {
  const rebuilt = await rebuildChart(chart);
  return "problem" in rebuilt ? rebuilt.problem : undefined;
};

/** The names of the regular files in a .tgz, as tar-stream reads them. */
async function namesIn(chart: Uint8Array): Promise<string[]> {
  const names: string[] = [];
  const entries = extract();
  Readable.from([chart]).pipe(createGunzip()).pipe(entries);
  for await (const entry of entries) {
    if (entry.header.type === "file") names.push(entry.header.name);
    entry.resume();
  }
  return names;
}

describe("rebuildChart", () => {
  it("passes references within the schema and to the JSON Schema drafts, and keeps every file", async () => {
    const local = JSON.stringify({
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { port: { type: "integer" } },
      properties: {
        a: { $ref: "#/definitions/port" },
        b: { $ref: "https://json-schema.org/draft/2020-12/schema" },
        c: { $ref: "http://json-schema.org/draft-07/schema#/definitions/nonNegativeInteger" },
        // A property named $ref is a name, not a reference.
        d: { properties: { $ref: { type: "string" } } },
      },
    });
    const files = { "app/Chart.yaml": chartYaml, "app/templates/cm.yaml": template, "app/values.schema.json": local };
    const rebuilt = await rebuildChart(await archive(files));
    assert.ok("archive" in rebuilt);
    assert.deepEqual(await namesIn(rebuilt.archive), Object.keys(files));
  });

  it("refuses what would be fetched or read: URLs, files, relative paths and unknown meta-schemas, naming the file", async () => {
    const cases: [string, string][] = [
      [schema({ $ref: "http://169.254.169.254/latest/meta-data" }), '"http://169.254.169.254/latest/meta-data" ($ref)'],
      [schema({ $ref: "file:///var/run/secrets/kubernetes.io/serviceaccount/token" }), "($ref)"],
      [schema({ $ref: "other.json#/x" }), '"other.json#/x" ($ref)'],
      [schema({ $dynamicRef: "https://example.com/s" }), "($dynamicRef)"],
      [schema({ $recursiveRef: "https://example.com/s" }), "($recursiveRef)"],
      [JSON.stringify({ $schema: "http://127.0.0.1:8080/meta" }), "($schema)"],
    ];
    for (const [text, said] of cases) {
      const problem = await problemOf(await archive({ "app/Chart.yaml": chartYaml, "app/values.schema.json": text }));
      assert.ok(problem?.startsWith("values.schema.json refers to "), problem);
      assert.ok(problem?.includes(said), `${problem} names ${said}`);
      assert.match(problem ?? "", /may refer only within itself/);
    }
  });

  it("reads the archive as Helm does: subchart directories and archives, backslashes, a byte-order mark", async () => {
    const outside = schema({ $ref: "http://10.0.0.1/s.json" });
    const packedSub = await archive({ "db/Chart.yaml": chartYaml, "db/values.schema.json": outside });
    const cases: [Record<string, string | Uint8Array>, string][] = [
      [{ "app/charts/db/values.schema.json": outside }, "charts/db/values.schema.json refers to"],
      [
        { "app/charts/db/charts/cache/values.schema.json": outside },
        "charts/db/charts/cache/values.schema.json refers to",
      ],
      [{ "app/charts/db-1.0.0.tgz": packedSub }, "charts/db-1.0.0.tgz: values.schema.json refers to"],
      [{ "app\\values.schema.json": outside }, "values.schema.json refers to"],
      [{ "app/values.schema.json": `\uFEFF${outside}` }, "values.schema.json refers to"],
      [{ "app/./x/../values.schema.json": outside }, "values.schema.json refers to"],
    ];
    for (const [files, said] of cases) {
      const problem = await problemOf(await archive({ "app/Chart.yaml": chartYaml, ...files }));
      assert.ok(problem?.startsWith(said), `${Object.keys(files).join()}: ${problem}`);
    }
    // A template that happens to be named so is not a schema.
    const named = await archive({ "app/Chart.yaml": chartYaml, "app/templates/values.schema.json": "{{ .Values }}" });
    assert.equal(await problemOf(named), undefined);
  });

  it("refuses what it cannot read, a schema too large to parse, and an archive past Helm's own bound", async () => {
    assert.match((await problemOf(Buffer.from("not gzip"))) ?? "", /cannot be read as a gzipped tar/);
    const notJson = await archive({ "app/Chart.yaml": chartYaml, "app/values.schema.json": "{ $ref: x" });
    assert.match((await problemOf(notJson)) ?? "", /^values\.schema\.json is not JSON/);
    // A schema of 1 MiB and a byte (`[[],[],…]` of 99 MiB ran the operator out of heap when parsed).
    const big = await archive({
      "app/Chart.yaml": chartYaml,
      "app/values.schema.json": "[]".repeat(maxSchemaBytes / 2 + 1),
    });
    assert.match(
      (await problemOf(big)) ?? "",
      /values\.schema\.json is one of the chart's schemas, which may be at most 1 MiB/,
    );
    const huge = await archive({ "app/Chart.yaml": chartYaml, "app/big.bin": new Uint8Array(maxUnpackedBytes + 1) });
    assert.match((await problemOf(huge)) ?? "", /unpacks to more than 100 MiB/);
  });
});

// ---- archives that two tar readers read differently, written byte by byte ----

/** A 512-byte tar header; `sizeField` replaces the size as written (12 bytes). */
function header(name: string, size: number, options: { typeflag?: string; sizeField?: Buffer } = {}): Buffer {
  const block = Buffer.alloc(512);
  const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, "0")}\0`;
  block.write(name, 0, 100, "latin1");
  block.write(octal(0o644, 8), 100);
  block.write(octal(0, 8), 108);
  block.write(octal(0, 8), 116);
  if (options.sizeField) options.sizeField.copy(block, 124);
  else block.write(octal(size, 12), 124);
  block.write(octal(0, 12), 136);
  block.write(options.typeflag ?? "0", 156);
  block.write("ustar\u000000", 257, "latin1");
  block.write("        ", 148);
  const sum = block.reduce((total, byte) => total + byte, 0);
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  return block;
}
const padded = (data: Buffer) => Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
const entry = (name: string, data: string, options: { typeflag?: string } = {}) =>
  Buffer.concat([header(name, Buffer.byteLength(data), options), padded(Buffer.from(data))]);
const tarball = (...parts: Buffer[]) => gzipSync(Buffer.concat([...parts, Buffer.alloc(1024)]));

describe("the renderer with the real helm", () => {
  it("gives helm only what the operator read: archives read differently by Go reach helm without their schema", async (t) => {
    // GIVEN a server that counts what it is asked, and charts whose schema refers to it
    let requests = 0;
    const server = createServer((_, response) => {
      requests++;
      response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s.json`;
    const outside = schema({ $ref: url });
    const base = [entry("app/Chart.yaml", chartYaml), entry("app/templates/cm.yaml", template)];
    const inner = entry("app/values.schema.json", outside);
    const disguised = {
      // Typeflag 'N' (an old GNU long name): Go reads a regular file, tar-stream a header of the next entry.
      typeN: tarball(...base, entry("app/values.schema.json", outside, { typeflag: "N" })),
      // A size field "\0\0 000001000": tar-stream reads 0, Go 512; the next block is a file to one and data to the
      // other, the schema hidden in it.
      sizeField: tarball(
        ...base,
        header("app/README.md", 0, { sizeField: Buffer.from("\0\0 000001000", "latin1") }),
        header("app/cover.txt", inner.length),
        inner,
      ),
    };
    const renderer = helmRenderer({ binary: await helmBinary() });
    const render = (chart: Uint8Array) =>
      renderer.render({ chart, release: "r", namespace: "team-a", values: { x: 1 } });

    // WHEN each renders, THEN it renders, and the server is never asked
    for (const [name, chart] of Object.entries(disguised)) {
      const rendered = await render(chart);
      assert.match(rendered.manifest, /kind: ConfigMap/, name);
      assert.equal(requests, 0, `${name}: helm asked the server`);
    }

    // AND the plain chart is refused for good, naming the reference, before helm runs
    await assert.rejects(render(tarball(...base, inner)), (error: ChartRenderError) => {
      assert.equal(error.reason, "ChartRenderFailed");
      assert.equal(error.transient, false);
      assert.ok(error.message.includes(JSON.stringify(url)), error.message);
      return true;
    });
    assert.equal(requests, 0);

    // AND a schema within itself is still helm's to check
    const within = JSON.stringify({
      definitions: { n: { type: "integer" } },
      properties: { x: { $ref: "#/definitions/n" } },
    });
    assert.match((await render(tarball(...base, entry("app/values.schema.json", within)))).manifest, /kind: ConfigMap/);
    await assert.rejects(
      renderer.render({
        chart: tarball(...base, entry("app/values.schema.json", within)),
        release: "r",
        namespace: "team-a",
        values: { x: "not a number" },
      }),
      /values don't meet the specifications of the schema/,
    );
  });
});
