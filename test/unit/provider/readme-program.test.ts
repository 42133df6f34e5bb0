import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { resolveSettings } from "../../../components/settings.ts";
import { externalOperatorFlags } from "../../../components/operator-flags.ts";
import { parseOptions } from "../../../operator/options.ts";
import { readmeOperatorFlags, readmeProjectFiles } from "../../../tools/lib/readme-project.ts";
import { enginesNodeOf, oldestVersionOf } from "../../support/oldest-node.ts";

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), "utf8");

// The e2e runs the README's project (test/e2e/package.test.ts); the template must be that very project.
test("the template project's files are the README's 'Your own project' files", () => {
  for (const [name, text] of readmeProjectFiles()) assert.equal(read(`examples/new-project/${name}`), text, name);
});

// A process started otherwise would reconcile beside a second one, or watch the wrong namespaces.
test("the README's operator command starts the operator its program's platform lists (externalOperatorFlags)", () => {
  const platformArgs = '{ namespace: "shop-platform", watchNamespaces: ["shop"], operatorPlacement: "external" }';
  assert.ok(readmeProjectFiles().get("index.ts")!.includes(platformArgs), "the program's external platform");
  const settings = resolveSettings("shop-platform", {
    namespace: "shop-platform",
    watchNamespaces: ["shop"],
    operatorPlacement: "external",
  });
  assert.ok(settings.ok);
  const listed = externalOperatorFlags(settings.settings)!;
  const documented = readmeOperatorFlags();
  assert.ok(documented.includes("--leader-elect"), documented.join(" "));
  // The same operator, flag for flag, where the README leaves out only flags at their defaults
  assert.deepEqual(parseOptions(documented, {}), parseOptions(listed, {}));
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

// The package test runs the README's project on the oldest Node its engines name (test/support/oldest-node.ts).
test("the README's project, its prose and the package name one oldest Node, a version the package test can run", () => {
  const range = enginesNodeOf(readmeProjectFiles().get("package.json")!);
  assert.equal(enginesNodeOf(read("package.json")), range, "the package's own engines.node");
  const oldest = oldestVersionOf(range);
  const [major, minor] = oldest.split(".");
  assert.match(read("README.md"), new RegExp(`needs \\*\\*Node ≥ ${major}\\.${minor} on PATH\\*\\*`));
});

test("oldestVersionOf: the version a >= range starts at, in full; other ranges have none", () => {
  assert.equal(oldestVersionOf(">=22.19"), "22.19.0");
  assert.equal(oldestVersionOf(">= 22.19.1"), "22.19.1");
  for (const range of ["^22.19.0", "22", ">=22", ">=22.19 <25", "*"]) {
    assert.throws(() => oldestVersionOf(range), /expected ">=MAJOR\.MINOR\[\.PATCH\]"/, range);
  }
  assert.throws(() => enginesNodeOf("{}"), /no engines\.node/);
});
