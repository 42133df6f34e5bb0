/**
 * The renderer with the real helm (the toolchain's, as `npm start`'s operator finds it): each of a chart's limits
 * (CPU, memory, output, objects) stops a render on its own, naming its flag; and archives that Go's tar reader and
 * tar-stream read differently reach helm only as the operator read them, so helm makes no request.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { ChartRenderError, defaultRenderLimits, helmRenderer } from "../../chart/index.ts";
import { helmBinary, packChart } from "../support/helm.ts";

const chartYaml = "apiVersion: v2\nname: app\nversion: 0.1.0\n";
const template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
const schema = (reference: object) => JSON.stringify({ type: "object", properties: { x: reference } });

/** A chart of one template, packed by helm. */
async function chartOf(text: string): Promise<Uint8Array> {
  const dir = await mkdtemp(path.join(tmpdir(), "myapp-hostile-"));
  try {
    await mkdir(path.join(dir, "templates"), { recursive: true });
    await writeFile(path.join(dir, "Chart.yaml"), "apiVersion: v2\nname: hostile\nversion: 0.1.0\n");
    await writeFile(path.join(dir, "templates/cm.yaml"), text);
    return await packChart(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("the real helm: a looping, a memory-hungry, a huge and a many-object chart each fail on their own limit, and a good chart still renders", async () => {
  const binary = await helmBinary();
  // A 2 MiB output limit: helm holds its whole render in memory (and parses it to sort), so an output far past the
  // default 16 MiB would hit the memory limit first.
  const renderer = helmRenderer({ binary, limits: { ...defaultRenderLimits, cpuSeconds: 5, outputMiB: 2 } });
  const cases = [
    // Nested ranges: 10^9 iterations of nothing, CPU only.
    { limit: "cpu", template: "{{ range until 100000 }}{{ range until 10000 }}{{ end }}{{ end }}" },
    // A string doubled thirty times: 1 GiB.
    { limit: "memory", template: '{{ $x := "ab" }}{{ range until 30 }}{{ $x = print $x $x }}{{ end }}{{ $x }}' },
    // 4 MiB of YAML, within memory.
    {
      limit: "output",
      template: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  x: {{ "a" | repeat 4000000 }}\n',
    },
    // 600 small ConfigMaps: 30 KiB of output, over the default 500 objects.
    {
      limit: "objects",
      template:
        "{{ range $i := until 600 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x{{ $i }}\n{{ end }}\n",
    },
  ];
  for (const { limit, template } of cases) {
    const chart = await chartOf(template);
    await assert.rejects(
      renderer.render({ chart, release: "r", namespace: "n", values: {} }),
      (error: unknown) =>
        error instanceof ChartRenderError &&
        error.reason === "ChartRenderLimit" &&
        error.message.includes(`--render-${limit}`),
    );
  }
  const good = await chartOf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n");
  const rendered = await renderer.render({ chart: good, release: "r", namespace: "n", values: {} });
  assert.match(rendered.manifest, /name: ok/);
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

test("gives helm only what the operator read: archives read differently by Go reach helm without their schema", async (t) => {
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
  const render = (chart: Uint8Array) => renderer.render({ chart, release: "r", namespace: "team-a", values: { x: 1 } });

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
