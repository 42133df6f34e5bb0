/**
 * `myapp-operator --version` in each place the operator runs: a checkout (operator/version.ts), the installed
 * tarball (build/operator/version.js inside node_modules/myapp-platform, below the user's own package.json), and
 * the image's single-file bundle, which has no package.json at all.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { pathToFileURL } from "node:url";
import { build, transformSync } from "esbuild";
import { buildCommit, buildInfoFile, operatorVersion, packageVersion, versionLine } from "../../../operator/version.ts";
import { buildInfoFile as writtenBuildInfoFile } from "../../../tools/lib/build-info.ts";
import { versionDefine } from "../../../tools/lib/operator-bundle.ts";

const versionSource = new URL("../../../operator/version.ts", import.meta.url);
const { version } = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "operator-version-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("operatorVersion", () => {
  it("is package.json's version in a checkout", () => {
    assert.equal(operatorVersion(), version);
  });

  it("is the installed package's version from build/operator/version.js, not the project's that installed it", (t) => {
    // GIVEN a project with its own package.json that installed the tarball (its layout: package.json + build/)
    const project = tempDir(t);
    writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "my-project", version: "1.0.0" }));
    const installed = path.join(project, "node_modules/myapp-platform");
    mkdirSync(path.join(installed, "build/operator"), { recursive: true });
    writeFileSync(path.join(installed, "package.json"), JSON.stringify({ name: "myapp-platform", version: "7.8.9" }));
    // and the module compiled to JavaScript as tsc emits it for the tarball
    const compiled = transformSync(readFileSync(versionSource, "utf8"), { loader: "ts", format: "esm" }).code;
    const module = path.join(installed, "build/operator/version.js");
    writeFileSync(module, compiled);

    // WHEN the compiled module is asked
    const printed = execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { operatorVersion } from ${JSON.stringify(pathToFileURL(module).href)}; console.log(operatorVersion());`,
      ],
      { encoding: "utf8" },
    );

    // THEN it names the installed package's version
    assert.equal(printed, "7.8.9\n");
  });

  it("names the module when no package.json of the platform is above it", (t) => {
    const dir = tempDir(t);
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "my-project", version: "1.0.0" }));
    const url = pathToFileURL(path.join(dir, "build/operator/version.js")).href;
    assert.throws(
      () => packageVersion(url),
      /no package\.json of myapp-platform at or above .*build\/operator\/version\.js/,
    );
  });

  it("is embedded in the bundle, which runs where no package.json is", async (t) => {
    // GIVEN the module bundled with the bundle's define, in a directory with no package.json above it
    const dir = tempDir(t);
    const entry = path.join(dir, "entry.ts");
    writeFileSync(
      entry,
      `import { operatorVersion } from ${JSON.stringify(versionSource.pathname)};\nconsole.log(operatorVersion());\n`,
    );
    const outfile = path.join(dir, "out.mjs");
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      define: versionDefine(),
      logLevel: "silent",
    });

    // WHEN it runs THEN it prints the version it was built with
    assert.equal(execFileSync(process.execPath, [outfile], { cwd: dir, encoding: "utf8" }), `${version}\n`);
    // AND without the define the same code finds no package.json (so the define is what answers)
    await build({ entryPoints: [entry], outfile, bundle: true, platform: "node", format: "esm", logLevel: "silent" });
    assert.throws(() => execFileSync(process.execPath, [outfile], { cwd: dir, stdio: "pipe" }), /no package\.json/);
  });
});

describe("versionLine: the build beside the version", () => {
  /** A project that installed the tarball, with build/operator/version.js as tsc emits it; returns that module. */
  function installedPackage(t: TestContext, buildInfo?: string): string {
    const project = tempDir(t);
    const installed = path.join(project, "node_modules/myapp-platform");
    mkdirSync(path.join(installed, "build/operator"), { recursive: true });
    writeFileSync(path.join(installed, "package.json"), JSON.stringify({ name: "myapp-platform", version: "7.8.9" }));
    if (buildInfo !== undefined) writeFileSync(path.join(installed, "build", buildInfoFile), buildInfo);
    const compiled = transformSync(readFileSync(versionSource, "utf8"), { loader: "ts", format: "esm" }).code;
    const module = path.join(installed, "build/operator/version.js");
    writeFileSync(module, compiled);
    return module;
  }
  const printedBy = (module: string) =>
    execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { versionLine } from ${JSON.stringify(pathToFileURL(module).href)}; console.log(versionLine());`,
      ],
      { encoding: "utf8" },
    );

  it("names the commit tools/build.ts recorded in build/, clean or dirty", (t) => {
    assert.equal(printedBy(installedPackage(t, '{"commit":"84458a1"}\n')), "7.8.9 (build 84458a1)\n");
    assert.equal(printedBy(installedPackage(t, '{"commit":"84458a1+dirty"}\n')), "7.8.9 (build 84458a1+dirty)\n");
  });

  it("is the version alone for a package built outside git, or a record it cannot read", (t) => {
    assert.equal(printedBy(installedPackage(t)), "7.8.9\n");
    assert.equal(printedBy(installedPackage(t, "not json")), "7.8.9\n");
    assert.equal(printedBy(installedPackage(t, '{"commit":"$(rm -rf /)"}')), "7.8.9\n");
  });

  it("is the version alone in a checkout, whatever a build left in build/", () => {
    // operator/version.ts looks one directory up, at the repository's root, where nothing writes the record
    assert.equal(buildCommit(), undefined);
    assert.equal(versionLine(), version);
  });

  it("formats what it is given", () => {
    assert.equal(versionLine("0.2.0", "84458a1"), "0.2.0 (build 84458a1)");
    assert.equal(versionLine("0.2.0", undefined), "0.2.0");
  });

  it("is the version alone in the bundle, even beside another build's record", async (t) => {
    // GIVEN the bundle in a checkout's build/operator/, and a build/build-info.json an earlier build left
    const dir = tempDir(t);
    const entry = path.join(dir, "entry.ts");
    writeFileSync(
      entry,
      `import { versionLine } from ${JSON.stringify(versionSource.pathname)};\nconsole.log(versionLine());\n`,
    );
    mkdirSync(path.join(dir, "operator"));
    writeFileSync(path.join(dir, buildInfoFile), '{"commit":"0000000"}');
    const outfile = path.join(dir, "operator/out.mjs");
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      define: versionDefine(),
      logLevel: "silent",
    });
    // WHEN it runs THEN it prints the version it was built with, and no build
    assert.equal(execFileSync(process.execPath, [outfile], { cwd: dir, encoding: "utf8" }), `${version}\n`);
  });

  it("reads the file tools/build.ts writes", () => {
    assert.equal(buildInfoFile, writtenBuildInfoFile);
  });
});
