/**
 * The chart helm is given: rebuilt from what the operator read, refused when a values.schema.json would make helm
 * load from outside it (read as Helm reads the archive: subchart directories and archives, `\` separators, a
 * byte-order mark), bounded in what it unpacks. (What the real helm makes of archives two tar readers read
 * differently: test/integration/chart-real-helm.test.ts.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extract, pack } from "tar-stream";
import { Readable } from "node:stream";
import { createGunzip, gunzipSync, gzipSync } from "node:zlib";
import {
  maxEntries,
  maxInflatedBytes,
  maxSchemaBytes,
  maxUnpackedBytes,
  rebuildChart,
} from "../../../chart/chart-archive.ts";
import { chartArchive as archive } from "../../support/chart-archive.ts";

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

  it("counts what gunzip yields, not what the tar says: zeros after the archive's end, in the chart and its subcharts", async () => {
    // GIVEN a chart whose gzip goes on past the tar's end with zeros (tar readers skip them, 1,000:1 packed), and
    // one whose two subchart archives do so with 60 MiB each: each file within every bound the tar states
    const trailing = (tar: Uint8Array, bytes: number) =>
      new Uint8Array(gzipSync(Buffer.concat([gunzipSync(tar), Buffer.alloc(bytes)])));
    const plain = await archive({ "app/Chart.yaml": chartYaml });
    const padded = trailing(plain, maxInflatedBytes);
    const sub = async (name: string) =>
      trailing(await archive({ [`${name}/Chart.yaml`]: chartYaml.replace("app", name) }), 60 * 1024 * 1024);
    const nested = await archive({
      "app/Chart.yaml": chartYaml,
      "app/charts/a.tgz": await sub("a"),
      "app/charts/b.tgz": await sub("b"),
    });
    assert.ok(padded.length < 256 * 1024 && nested.length < 256 * 1024, "each packs small");
    // WHEN each is rebuilt THEN each is refused, saying what counted
    for (const chart of [padded, nested]) {
      assert.match((await problemOf(chart)) ?? "", /unpacks to more than 109 MiB \(tar headers, padding, data/);
    }
    // AND a chart with some padding of its own still rebuilds
    assert.ok("archive" in (await rebuildChart(trailing(plain, 1024 * 1024))));
  });

  it("counts every entry, directories and links too", async () => {
    const tar = pack();
    const chunks: Buffer[] = [];
    tar.on("data", (chunk) => chunks.push(chunk as Buffer));
    const ended = new Promise<void>((resolve) => tar.on("end", () => resolve()));
    tar.entry({ name: "app/Chart.yaml" }, chartYaml);
    for (let i = 0; i < maxEntries; i++) tar.entry({ name: `app/d${i}/`, type: "directory" });
    tar.finalize();
    await ended;
    assert.equal(
      await problemOf(gzipSync(Buffer.concat(chunks))),
      "the chart has more than 10000 entries (files, directories, links)",
    );
  });

  it("checks a large schema as a small one (off the event loop)", async () => {
    // GIVEN schemas of 300 KiB: nested arrays beside a reference outside, and the same within
    const filler = "[".repeat(20) + "]".repeat(20) + ",";
    const big = (reference: string) =>
      JSON.stringify({ properties: { x: { $ref: reference } } }).replace(
        /}$/,
        `, "filler": [${filler.repeat((300 * 1024) / filler.length)}0]}`,
      );
    const files = (schema: string) => ({ "app/Chart.yaml": chartYaml, "app/values.schema.json": schema });
    // WHEN each is rebuilt THEN the one referring outside is refused naming the file, the other passes
    const outside = await problemOf(await archive(files(big("http://10.0.0.1/s.json"))));
    assert.match(outside ?? "", /^values\.schema\.json refers to "http:\/\/10\.0\.0\.1\/s\.json" \(\$ref\)/);
    assert.equal(await problemOf(await archive(files(big("#/definitions/x")))), undefined);
    assert.match((await problemOf(await archive(files(`${big("#/x")} trailing`)))) ?? "", /is not JSON/);
  });
});
