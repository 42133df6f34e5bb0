import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { insertIntoSection, textAbove } from "../../../bench/support/results-section.ts";

const first = { end: "<!-- first end -->", intro: "# Results\n\n| a |\n| --- |" };
const second = { end: "<!-- second end -->", intro: "## Second\n\n| b |\n| --- |" };

describe("RESULTS.md sections", () => {
  it("creates a missing section at the end, then inserts rows into it, never into another section", (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), "results-section-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "RESULTS.md");

    insertIntoSection(file, first, "| 1 |", true);
    insertIntoSection(file, second, "| x |", true);
    insertIntoSection(file, first, "| 2 |", true);

    assert.equal(
      readFileSync(file, "utf8"),
      "# Results\n\n| a |\n| --- |\n| 1 |\n| 2 |\n\n<!-- first end -->\n\n## Second\n\n| b |\n| --- |\n| x |\n\n<!-- second end -->\n",
    );
    assert.doesNotMatch(textAbove(file, first), /Second/);
  });

  it("sets a block apart from what is above it", (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), "results-section-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "RESULTS.md");
    writeFileSync(file, "## Runs\n\n### run 1\n\n<!-- runs end -->\n");

    insertIntoSection(file, { end: "<!-- runs end -->", intro: "" }, "### run 2", false);

    assert.equal(readFileSync(file, "utf8"), "## Runs\n\n### run 1\n\n### run 2\n\n<!-- runs end -->\n");
  });
});
