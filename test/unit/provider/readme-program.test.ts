import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { readmeProjectFiles } from "../../../tools/lib/readme-project.ts";

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), "utf8");

// The e2e runs the README's project (test/e2e/package.test.ts); the template must be that very project.
test("the template project's files are the README's 'Your own project' files", () => {
  for (const [name, text] of readmeProjectFiles()) assert.equal(read(`examples/new-project/${name}`), text, name);
});

test("the README's project installs the package from this version's tarball, never by name from a registry", () => {
  const manifest = JSON.parse(readmeProjectFiles().get("package.json")!) as {
    type?: string;
    dependencies: Record<string, string>;
  };
  const { version } = JSON.parse(read("package.json")) as { version: string };
  assert.equal(manifest.dependencies["myapp-platform"], `file:myapp-platform-${version}.tgz`);
  assert.equal(manifest.type, "module", "index.ts uses import: the project must be an ES module");
  const packageJson = JSON.parse(read("package.json")) as { dependencies: Record<string, string> };
  for (const name of ["@pulumi/pulumi", "@pulumi/kubernetes"]) {
    assert.equal(manifest.dependencies[name], packageJson.dependencies[name], `${name} as the platform pins it`);
  }
});
