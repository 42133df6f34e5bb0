/**
 * One chart version's entry from a repository's index, in Helm's block layout and in JSON, read without building
 * the rest of the file: the entry asked for and the first versions listed (for messages), a chart that is not
 * there, and an index of a tenant's repository that lists millions of tiny entries, refused for their number.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { findIndexEntry, maxChartVersions } from "../../../chart/repository-index.ts";

function helmIndex(versions: number, chart = "app"): string {
  const lines = ["apiVersion: v1", "entries:", "  other:", "  - name: other", "    version: 9.9.9", `  ${chart}:`];
  for (let v = 0; v < versions; v++) {
    lines.push(`  - name: app`, `    urls:`, `    - app-1.${v}.0.tgz`, `    version: 1.${v}.0`);
  }
  lines.push("  zzz:", "  - version: 1.5.0", "generated: 2024-01-01T00:00:00Z");
  return lines.join("\n") + "\n";
}

describe("findIndexEntry", () => {
  test("finds the version in Helm's layout, under a plain or quoted key, with the first 20 listed", async () => {
    const listing = await findIndexEntry(helmIndex(100), "app", "1.57.0");
    assert.deepEqual(listing?.entry, { name: "app", urls: ["app-1.57.0.tgz"], version: "1.57.0" });
    assert.deepEqual(
      listing?.first.map((entry) => entry.version),
      Array.from({ length: 20 }, (_, v) => `1.${v}.0`),
    );
    const quoted = await findIndexEntry(helmIndex(3, '"app"'), "app", "1.2.0");
    assert.deepEqual(quoted?.entry?.urls, ["app-1.2.0.tgz"]);
    // `v` + version is the same version, as Helm reads it; another chart's 1.5.0 is not this one's
    assert.equal(
      (await findIndexEntry(helmIndex(3).replace("version: 1.1.0", "version: v1.1.0"), "app", "1.1.0"))?.entry?.version,
      "v1.1.0",
    );
    const missing = await findIndexEntry(helmIndex(3), "app", "1.5.0");
    assert.equal(missing?.entry, undefined);
    assert.equal(missing?.first.length, 3);
  });

  test("skips JSON values as JSON reads them: escaped quotes and backslashes, values longer than one slice", async () => {
    // GIVEN other charts whose keys and strings hold escapes, and a value of 3 MiB (skipped in slices of 1 MiB)
    const entry = { version: "1.0.0", urls: ["app-1.0.0.tgz"] };
    const index = JSON.stringify({
      entries: {
        'a"b\\': [{ description: "ends with a backslash \\", note: '"quoted" and \\"' }],
        big: [{ blob: "x".repeat(3 * 1024 * 1024), nested: [[[["]"]]]] }],
        'c\\"': [[[[[[]]]]]],
        app: [{ description: 'a "} or ]" in a string', ...entry }],
      },
    });
    // WHEN the chart after them is looked for THEN it is found, and so is a chart whose key has escapes
    assert.deepEqual((await findIndexEntry(index, "app", "1.0.0"))?.entry, {
      description: 'a "} or ]" in a string',
      ...entry,
    });
    assert.equal((await findIndexEntry(index, 'a"b\\', "1.0.0"))?.first.length, 1);
    assert.equal(await findIndexEntry(index, "missing", "1.0.0"), undefined);
  });

  test("finds the version in a JSON index, skipping other charts and fields unread", async () => {
    const index = JSON.stringify({
      apiVersion: "v1",
      entries: {
        other: [{ version: "1.0.0", urls: ["x"] }],
        app: Array.from({ length: 50 }, (_, v) => ({
          name: "app",
          version: `2.${v}.0`,
          urls: [`app-2.${v}.0.tgz`],
          annotations: { "a]b": '{"[' },
        })),
      },
      generated: "2024",
    });
    const listing = await findIndexEntry(index, "app", "2.42.0");
    assert.deepEqual(listing?.entry?.urls, ["app-2.42.0.tgz"]);
    assert.equal(listing?.first.length, 20);
    assert.equal(await findIndexEntry(index, "absent", "1.0.0"), undefined);
  });

  test("a chart the index does not name is undefined, in either layout", async () => {
    assert.equal(await findIndexEntry(helmIndex(3), "absent", "1.0.0"), undefined);
    assert.equal(await findIndexEntry('{"entries":{}}', "app", "1.0.0"), undefined);
  });

  test("refuses a chart listing more versions than it reads, in either layout, before building them", async () => {
    const cap = 16 * 1024 * 1024;
    const head = "apiVersion: v1\nentries:\n  app:\n";
    const yaml = head + "  - {}\n".repeat(Math.floor((cap - head.length) / 7));
    await assert.rejects(findIndexEntry(yaml, "app", "1.0.0"), {
      name: "IndexFormatError",
      message: `it lists more than ${maxChartVersions} versions of app`,
    });
    const json = '{"entries":{"app":[' + Array(5_000_000).fill("{}").join(",") + "]}}";
    await assert.rejects(findIndexEntry(json, "app", "1.0.0"), { message: /more than 10000 versions of app/ });
  });

  test("refuses JSON it cannot read, naming it", async () => {
    await assert.rejects(findIndexEntry('{"entries":{"app":[{"version":"1.0.0",}]}}', "app", "1.0.0"), {
      name: "IndexFormatError",
      message: "index.yaml is neither valid JSON nor YAML",
    });
    await assert.rejects(findIndexEntry('{"entries":{"app":[', "app", "1.0.0"), { name: "IndexFormatError" });
  });

  test("reads a JSON key with escapes as JSON does, and one without as it stands", async () => {
    const index = '{"entries":{"a\\u0070p":[{"version":"2.0.0"}],"app":[{"version":"1.0.0"}]}}';
    assert.equal((await findIndexEntry(index, "app", "2.0.0"))?.entry?.version, "2.0.0", "the escaped key comes first");
    const plain = '{"entries":{"apps":[{"version":"2.0.0"}],"app":[{"version":"1.0.0"}]}}';
    assert.equal((await findIndexEntry(plain, "app", "1.0.0"))?.entry?.version, "1.0.0");
  });

  test("refuses an entry over 256 KiB before splitting it into lines, and reads one of 200 KiB", async () => {
    const comments = "    # x\n".repeat(300_000);
    const huge = `apiVersion: v1\nentries:\n  app:\n  - version: 1.0.0\n${comments}`;
    await assert.rejects(findIndexEntry(huge, "app", "1.0.0"), /an entry of index\.yaml is larger than 256 KiB/);
    // Parsed off the event loop (from 128 KiB on), with the same result.
    const urls = Array.from({ length: 4_000 }, (_, i) => `    - https://charts.example/app-1.0.0-${i}.tgz`);
    const large = `apiVersion: v1\nentries:\n  app:\n  - version: 1.0.0\n    urls:\n${urls.join("\n")}\n`;
    assert.ok(large.length > 128 * 1024 && large.length < 256 * 1024);
    const listing = await findIndexEntry(large, "app", "1.0.0");
    assert.equal((listing?.entry?.urls as string[]).length, 4_000);
  });
});
