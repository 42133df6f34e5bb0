import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readManifests, readRender } from "../../../chart/index.ts";

const stream = `---
# Source: app/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
    - port: 8080
---
# Source: app/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    note: "yes"
spec:
  replicas: 2
  template:
    spec:
      containers: [{ name: app, image: "nginx:1.27", args: ["--port", "8080"] }]
`;

/** A render whose text can be swapped after a read: what the second read returns shows where it came from. */
function render(manifest: string): { manifest: string } {
  return { manifest };
}

describe("readRender", () => {
  test("reads a render as readManifests does, and again from its copy once the text is read", async () => {
    const rendered = render(stream);
    const first = await readRender(rendered);
    assert.deepEqual(first, await readManifests(stream));
    rendered.manifest = "---\n# Source: app/templates/x.yaml\n: not yaml [\n";
    assert.deepEqual(await readRender(rendered), first, "the second read parsed the copy, not the text");
  });

  test("each read returns objects of its own", async () => {
    const rendered = render(stream);
    const first = await readRender(rendered);
    (first[1]!.object.metadata.annotations as Record<string, string>)["note"] = "changed";
    const second = await readRender(rendered);
    assert.equal(second[1]!.object.metadata.annotations?.["note"], "yes");
    assert.notEqual(second[0]!.object, (await readRender(rendered))[0]!.object);
  });

  test("keeps no copy of a render JSON cannot say exactly (infinities, NaN)", async () => {
    const rendered = render(`${stream}  minReadySeconds: .inf\n`);
    const [, deployment] = await readRender(rendered);
    assert.equal((deployment!.object["spec"] as { minReadySeconds: number }).minReadySeconds, Infinity);
    rendered.manifest = stream;
    const [, again] = await readRender(rendered);
    assert.equal((again!.object["spec"] as { minReadySeconds?: number }).minReadySeconds, undefined, "read again");
  });

  test("keeps no copy longer than the text (aliases expanded)", async () => {
    const aliased =
      "---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n" +
      `x: &x [${Array.from({ length: 50 }, (_, i) => `"value-${i}"`).join(", ")}]\n` +
      `y: [*x, *x, *x, *x, *x, *x, *x, *x]\n`;
    const rendered = render(aliased);
    await readRender(rendered);
    rendered.manifest = stream;
    assert.equal((await readRender(rendered)).length, 2, "read the text again: no copy was kept");
  });

  test("a render that does not read throws as readManifests does, naming the template", async () => {
    await assert.rejects(
      readRender(render("---\n# Source: app/templates/bad.yaml\na: [\n")),
      /app\/templates\/bad\.yaml/,
    );
  });
});
