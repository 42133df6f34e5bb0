/**
 * What a chart's values.schema.json files would make Helm load: refused before helm runs, read as Helm reads the
 * archive (subchart directories and archives, `\` separators, a byte-order mark); and the real helm, given such a
 * chart through the renderer, makes no request.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { ChartRenderError, helmRenderer } from "../../../chart/index.ts";
import { maxUnpackedBytes, schemaReferenceProblem } from "../../../chart/schema-references.ts";
import { chartArchive as archive } from "../../support/chart-archive.ts";
import { helmBinary } from "../../support/helm.ts";

const chartYaml = "apiVersion: v2\nname: app\nversion: 0.1.0\n";
const template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
const schema = (reference: object) => JSON.stringify({ type: "object", properties: { x: reference } });

describe("schemaReferenceProblem", () => {
  it("passes references within the schema and to the JSON Schema drafts", async () => {
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
    assert.equal(
      await schemaReferenceProblem(await archive({ "app/Chart.yaml": chartYaml, "app/values.schema.json": local })),
      undefined,
    );
  });

  it("refuses what would be fetched or read: URLs, files, relative paths and unknown meta-schemas, naming the file", async () => {
    const cases: [string, string][] = [
      [schema({ $ref: "http://169.254.169.254/latest/meta-data" }), '"http://169.254.169.254/latest/meta-data" ($ref)'],
      [schema({ $ref: "file:///var/run/secrets/kubernetes.io/serviceaccount/token" }), "($ref)"],
      [schema({ $ref: "other.json#/x" }), '"other.json#/x" ($ref)'],
      [schema({ $dynamicRef: "https://example.com/s" }), "($dynamicRef)"],
      [JSON.stringify({ $schema: "http://127.0.0.1:8080/meta" }), "($schema)"],
    ];
    for (const [text, said] of cases) {
      const problem = await schemaReferenceProblem(
        await archive({ "app/Chart.yaml": chartYaml, "app/values.schema.json": text }),
      );
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
      const problem = await schemaReferenceProblem(await archive({ "app/Chart.yaml": chartYaml, ...files }));
      assert.ok(problem?.startsWith(said), `${Object.keys(files).join()}: ${problem}`);
    }
    // A template that happens to be named so is not a schema.
    const named = await archive({ "app/Chart.yaml": chartYaml, "app/templates/values.schema.json": "{{ .Values }}" });
    assert.equal(await schemaReferenceProblem(named), undefined);
  });

  it("refuses what it cannot read, and an archive that unpacks past Helm's own bound", async () => {
    assert.match((await schemaReferenceProblem(Buffer.from("not gzip"))) ?? "", /cannot be read as a gzipped tar/);
    const schemaNotJson = await archive({ "app/Chart.yaml": chartYaml, "app/values.schema.json": "{ $ref: x" });
    assert.match((await schemaReferenceProblem(schemaNotJson)) ?? "", /^values\.schema\.json is not JSON/);
    const huge = await archive({ "app/Chart.yaml": chartYaml, "app/big.bin": new Uint8Array(maxUnpackedBytes + 1) });
    assert.match((await schemaReferenceProblem(huge)) ?? "", /unpacks to more than 100 MiB/);
  });
});

describe("the renderer with the real helm", () => {
  it("refuses a chart whose schema refers to a server, and helm never asks it", async (t) => {
    // GIVEN a server that counts what it is asked, and a chart whose schema refers to it
    let requests = 0;
    const server = createServer((_, response) => {
      requests++;
      response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s.json`;
    const chart = await archive({
      "app/Chart.yaml": chartYaml,
      "app/templates/cm.yaml": template,
      "app/values.schema.json": schema({ $ref: url }),
    });

    // WHEN it is rendered
    const renderer = helmRenderer({ binary: await helmBinary() });
    const rendering = renderer.render({ chart, release: "r", namespace: "team-a", values: { x: 1 } });

    // THEN the render fails for good, naming the reference, and the server was never asked
    await assert.rejects(rendering, (error: ChartRenderError) => {
      assert.equal(error.reason, "ChartRenderFailed");
      assert.equal(error.transient, false);
      assert.ok(error.message.includes(JSON.stringify(url)), error.message);
      return true;
    });
    assert.equal(requests, 0);

    // AND the same chart with its schema within itself renders
    const within = await archive({
      "app/Chart.yaml": chartYaml,
      "app/templates/cm.yaml": template,
      "app/values.schema.json": JSON.stringify({
        definitions: { n: { type: "integer" } },
        properties: { x: { $ref: "#/definitions/n" } },
      }),
    });
    const rendered = await renderer.render({ chart: within, release: "r", namespace: "team-a", values: { x: 1 } });
    assert.match(rendered.manifest, /kind: ConfigMap/);
  });
});
