/**
 * A Node older than the package's `engines` is refused with a line that names the Node found and the one needed, by
 * both places a user's machine picks a Node from PATH: the operator's bin (`npx myapp-operator`, which on such a Node
 * used to exit 0 without a word) and the preload a project's program runs under (where a TypeScript program used to
 * fail with "Unknown file extension .ts"). The real files run in a child process whose reported version is made
 * older (`--import` of a module that sets it, before anything else loads).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { nodeVersionProblem, oldestNode } from "../../../operator/node-version.ts";
import { repoRoot } from "../../../tools/lib/paths.ts";
import { enginesNodeOf, oldestVersionOf } from "../../support/oldest-node.ts";

const run = promisify(execFile);
const preload = path.join(repoRoot, "pulumi-plugin/pulumi-nodejs-preload.mjs");
const scratch = mkdtempSync(path.join(os.tmpdir(), "node-version-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A module that makes this Node report `version`, for `node --import`. */
function pretendVersion(version: string): string {
  const file = path.join(scratch, `pretend-${version}.mjs`);
  writeFileSync(
    file,
    `Object.defineProperty(process, "version", { value: "v${version}" });\n` +
      `Object.defineProperty(process.versions, "node", { value: "${version}" });\n`,
  );
  return file;
}

/** Exit code and stderr of `node ...args`, which must end by itself. */
async function node(args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await run(process.execPath, args, { encoding: "utf8", timeout: 30_000, env: { PATH: "" } });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? "" };
  }
}

describe("the oldest Node", () => {
  it("is package.json's engines, in the operator and in the preload", () => {
    const engines = oldestVersionOf(enginesNodeOf(readFileSync(path.join(repoRoot, "package.json"), "utf8")));
    assert.equal(oldestNode, engines);
    assert.match(readFileSync(preload, "utf8"), new RegExp(`const oldestNode = "${engines.replaceAll(".", "\\.")}";`));
  });

  it("refuses what is older and nothing else", () => {
    for (const version of ["v20.20.2", "v22.18.9", "v22.9.0", "v18.0.0", "v0.12.0"])
      assert.match(nodeVersionProblem(version, "/usr/bin/node") ?? "", /^needs Node\.js 22\.19\.0 or later; this is /);
    for (const version of ["v22.19.0", "v22.19.1", "v22.20.0", "v24.21.0", "v100.0.0"])
      assert.equal(nodeVersionProblem(version, "/usr/bin/node"), undefined, version);
    assert.equal(
      nodeVersionProblem("v20.20.2", "/usr/bin/node"),
      "needs Node.js 22.19.0 or later; this is v20.20.2 (/usr/bin/node): put a newer node first on PATH",
    );
  });
});

describe("an older Node", () => {
  it("gets one line from the operator's bin and exit 1, before any flag or cluster is read", async () => {
    const { code, stderr } = await node([
      "--import",
      pretendVersion("20.20.2"),
      path.join(repoRoot, "operator/main.ts"),
      "--namespaces=shop",
    ]);
    assert.equal(code, 1);
    assert.equal(
      stderr,
      `myapp-operator: needs Node.js ${oldestNode} or later; this is v20.20.2 (${process.execPath}): ` +
        "put a newer node first on PATH\n",
    );
  });

  it("is refused by the preload in the program's runner and in the provider host, and passes at the oldest", async () => {
    for (const entry of ["run", "dynamic-provider"]) {
      // The preload acts only under @pulumi/pulumi's two entry points, as it finds them in argv[1].
      const dir = path.join(scratch, "node_modules/@pulumi/pulumi/cmd", entry);
      mkdirSync(dir, { recursive: true });
      const script = path.join(dir, "index.js");
      writeFileSync(script, 'process.stderr.write("started\\n");\n');
      const old = await node(["--import", pretendVersion("22.18.0"), "--import", preload, script]);
      assert.equal(old.code, 1, entry);
      assert.equal(
        old.stderr,
        `myapp-platform needs Node.js ${oldestNode} or later; pulumi started v22.18.0 (${process.execPath}), ` +
          "the first node on PATH: put a newer one first on PATH\n",
      );
      const oldest = await node(["--import", pretendVersion(oldestNode), "--import", preload, script]);
      assert.deepEqual(oldest, { code: 0, stderr: "started\n" }, entry);
    }
  });
});
