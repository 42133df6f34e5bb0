import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  maxDocumentBytes,
  maxExpandedNodes,
  maxNodeSeparators,
  parseDocument,
  readDocuments,
  RenderYamlError,
} from "../../../chart/render-yaml.ts";
import { parseManifests, readManifests } from "../../../chart/index.ts";

describe("parseDocument", () => {
  it("reads YAML 1.2's core schema: dates and yes stay strings, ~ is null", () => {
    assert.deepEqual(parseDocument("d: 2001-12-14\ne: yes\nf: 0o17\nh: ~\n"), {
      d: "2001-12-14",
      e: "yes",
      f: 15,
      h: null,
    });
  });

  it("keeps a __proto__ key as data, changing no prototype", () => {
    const value = parseDocument("a:\n  __proto__: { polluted: 1 }\n") as { a: object };
    assert.deepEqual(Object.keys(value.a), ["__proto__"]);
    assert.equal(Object.getPrototypeOf(value.a), Object.prototype);
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
  });

  it("refuses a duplicate key, naming its line", () => {
    assert.throws(
      () => parseDocument("a: 1\nb: 2\na: 3\n"),
      (error: unknown) => {
        assert.ok(error instanceof RenderYamlError);
        assert.match(error.message, /duplicated mapping key \(3:1\)/);
        return true;
      },
    );
  });

  it("reads a mapping of 50,000 keys, which a pairwise duplicate check would take minutes over", () => {
    const text = `data:\n${Array.from({ length: 50_000 }, (_, i) => `  k${i}: v\n`).join("")}`;
    const value = parseDocument(text) as { data: Record<string, string> };
    assert.equal(Object.keys(value.data).length, 50_000);
  });

  it("refuses 100 lists or maps nested in each other (js-yaml's maxDepth)", () => {
    assert.doesNotThrow(() => parseDocument(`${"[".repeat(99)}${"]".repeat(99)}`));
    assert.throws(() => parseDocument(`${"[".repeat(100)}${"]".repeat(100)}`), /nesting exceeded maxDepth \(100\)/);
  });

  it("refuses a document larger than the apiserver takes", () => {
    const text = `data:\n  blob: ${"a".repeat(maxDocumentBytes)}\n`;
    assert.throws(() => parseDocument(text), /a document of 3\.0 MiB; the apiserver takes at most 3\.0 MiB/);
  });

  it("expands aliases within the budget, and refuses a billion laughs", () => {
    assert.deepEqual(parseDocument("a: &x [1, 2]\nb: *x\n"), { a: [1, 2], b: [1, 2] });
    // Nine levels of ten aliases each: 10^9 nodes once expanded, from a few hundred bytes.
    const lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"];
    for (let level = 1; level <= 9; level++) {
      lines.push(`l${level}: &l${level} [${Array.from({ length: 10 }, () => `*l${level - 1}`).join(", ")}]`);
    }
    assert.throws(
      () => parseDocument(lines.join("\n")),
      /its aliases expand (to more than 1000000 nodes|it to more than)/,
    );
    // Short numbers reach the node budget before the size one.
    const numbers = ["l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"];
    for (let level = 1; level <= 6; level++) {
      numbers.push(`l${level}: &l${level} [${Array.from({ length: 10 }, () => `*l${level - 1}`).join(", ")}]`);
    }
    assert.throws(() => parseDocument(numbers.join("\n")), new RegExp(`expand to more than ${maxExpandedNodes} nodes`));
  });

  it("refuses a document whose aliases of a long string would write out larger than the apiserver takes", () => {
    // Few nodes, each a copy of 1 MiB: within the node budget, 450 MiB once written out.
    const text = `a: &a "${"x".repeat(1024 * 1024)}"\nb: [${Array.from({ length: 450 }, () => "*a").join(", ")}]\n`;
    assert.throws(
      () => parseDocument(text),
      /its aliases expand it to more than 3\.0 MiB; the apiserver takes at most/,
    );
    // Two copies are 2 MiB: an object the apiserver would take.
    const two = parseDocument(`a: &a "${"x".repeat(1024 * 1024)}"\nb: *a\n`) as { a: string; b: string };
    assert.equal(two.b.length, 1024 * 1024);
  });

  it("refuses unread a document that is nothing but separators; dense data in a string passes", () => {
    // 1.4 million flow items: refused in milliseconds, before js-yaml spends ~230 MiB on them
    const items = `items: [${Array(1_400_000).fill("1").join(",")}]\n`;
    assert.throws(() => parseDocument(items), /it holds 1400001 commas, line breaks and opening brackets/);
    assert.throws(() => parseDocument("\r".repeat(maxNodeSeparators + 1)), /may hold at most 1000000/);
    // A ConfigMap of 800 KB of comma-separated 0s and 1s in a block scalar, as a chart may render: stored by etcd
    const csv = Array.from({ length: 50_000 }, () => "0,1,0,1,1,0,1,0").join("\n      ");
    const configMap = parseDocument(`kind: ConfigMap\ndata:\n  data.csv: |\n      ${csv}\n`) as {
      data: Record<string, string>;
    };
    assert.equal(configMap.data["data.csv"]?.length, 50_000 * 16); // the lines and the final line break
  });

  it("refuses two documents where one is expected", () => {
    assert.throws(() => parseDocument("a: 1\n...\n---\nb: 2\n"), RenderYamlError);
  });
});

describe("readDocuments", () => {
  it("bounds what the aliases of all a render's documents expand to together", async () => {
    // Each document 2 MiB written out, under the apiserver's limit; eight of them past the render's 16 MiB.
    const document = (i: number) =>
      `---\n# Source: c/templates/t${i}.yaml\na: &a "${"x".repeat(1024 * 1024)}"\nb: *a\n`;
    const seven = Array.from({ length: 7 }, (_, i) => document(i)).join("");
    assert.equal((await readDocuments(seven)).length, 8);
    await assert.rejects(
      readDocuments(seven + document(7)),
      (error: RenderYamlError) =>
        /aliases expand the render's objects to more than 16\.0 MiB/.test(error.message) &&
        (error.document ?? "").includes("t7.yaml"),
    );
  });

  it("gives way to the event loop while it reads a large stream", async () => {
    const stream = Array.from(
      { length: 4000 },
      (_, i) => `---\n# Source: c/templates/t.yaml\nkind: K\nname: n${i}\ndata: ${"x".repeat(200)}\n`,
    ).join("");
    let ranMeanwhile = false;
    setImmediate(() => (ranMeanwhile = true));
    const documents = await readDocuments(stream);
    assert.equal(documents.filter((d) => d.value !== null).length, 4000);
    assert.ok(ranMeanwhile, "a callback queued before the read ran during it");
  });
});

describe("readManifests", () => {
  it("names the template of a document that is not YAML, as parseManifests does", async () => {
    const stream =
      "---\n# Source: c/templates/ok.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# Source: c/templates/bad.yaml\na: 1\na: 2\n";
    await assert.rejects(
      readManifests(stream),
      /^Error: c\/templates\/bad\.yaml is not valid YAML: duplicated mapping key/,
    );
    assert.throws(
      () => parseManifests(stream),
      /^Error: c\/templates\/bad\.yaml is not valid YAML: duplicated mapping key/,
    );
  });
});
