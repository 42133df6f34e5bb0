/** `npm start` and `npm run down` read their command lines strictly: nothing they do not take is ignored. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { downCommand, readCommandLine, startCommand } from "../../../tools/lib/command-flags.ts";

describe("npm run down's command line", () => {
  it("--keep-cluster keeps the clusters; nothing given destroys everything, as documented", () => {
    assert.deepEqual(readCommandLine(["--keep-cluster"], downCommand), { run: new Set(["keep-cluster"]) });
    assert.deepEqual(readCommandLine([], downCommand), { run: new Set() });
  });

  it("--help and -h print the usage and run nothing", () => {
    for (const flag of ["--help", "-h"]) {
      assert.deepEqual(readCommandLine([flag], downCommand), { exit: 0, stdout: downCommand.usage }, flag);
      // Even beside --keep-cluster: asking is never running.
      assert.ok(!("run" in readCommandLine(["--keep-cluster", flag], downCommand)), flag);
    }
    assert.match(downCommand.usage, /^Usage: npm run down \[-- --keep-cluster\]/);
  });

  it("a misspelt flag, a value or a stray argument is refused naming it and the flags there are (exit 2)", () => {
    // GIVEN --keep-clusters, which process.argv.includes("--keep-cluster") read as no flag: a full destroy
    const answer = readCommandLine(["--keep-clusters"], downCommand);
    assert.ok("exit" in answer);
    assert.equal(answer.exit, 2);
    assert.equal(answer.stdout, undefined);
    assert.equal(
      answer.stderr,
      `npm run down: unknown flag --keep-clusters; it takes --keep-cluster, --help\n${downCommand.usage}`,
    );
    const stray = readCommandLine(["cluster"], downCommand);
    assert.match(
      "stderr" in stray ? (stray.stderr ?? "") : "",
      /^npm run down: unexpected argument "cluster"; it takes/,
    );
    const valued = readCommandLine(["--keep-cluster=yes"], downCommand);
    assert.match(
      "stderr" in valued ? (valued.stderr ?? "") : "",
      /^npm run down: option '--keep-cluster' does not take an argument; it takes --keep-cluster, --help\n/,
    );
  });
});

describe("npm start's command line", () => {
  it("takes no arguments: --help prints the usage, anything else is refused instead of starting the whole run", () => {
    assert.deepEqual(readCommandLine([], startCommand), { run: new Set() });
    assert.deepEqual(readCommandLine(["--help"], startCommand), { exit: 0, stdout: startCommand.usage });
    for (const args of [["--verbose"], ["dev"], ["--", "x"]]) {
      const answer = readCommandLine(args, startCommand);
      assert.ok("exit" in answer && answer.exit === 2, args.join(" "));
      assert.match(
        answer.stderr ?? "",
        /^npm start: (unknown flag|unexpected argument) .*; it takes --help\nUsage: npm start/,
      );
    }
  });
});
