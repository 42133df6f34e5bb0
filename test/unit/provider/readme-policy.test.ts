/**
 * The README's "Platform policy" example is pasted into the program of "Your own project": its policy must be valid
 * on both of that program's placements, and its command for the local recipe's external operator must start the
 * operator the platform's `externalOperatorFlags` lists.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { resolveSettings, type MyAppOperatorArgs } from "../../../components/settings.ts";
import { externalOperatorFlags } from "../../../components/operator-flags.ts";
import { parseOptions } from "../../../operator/options.ts";
import { readmeProjectFiles } from "../../../tools/lib/readme-project.ts";

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
const section = readme.split("## Platform policy: refused at the door")[1]?.split(/^## /m)[0] ?? "";
const program = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? "";

/** The example's `const policy = { ... };`, evaluated: an object literal with comments, nothing else. */
function readmePolicy(): MyAppOperatorArgs["policy"] {
  const literal = /^const policy = (\{[\s\S]*?^\});$/m.exec(program)?.[1];
  assert.ok(literal, `the example declares its policy:\n${program}`);
  return new Function(`return (${literal});`)() as MyAppOperatorArgs["policy"];
}

const external: MyAppOperatorArgs = {
  namespace: "shop-platform",
  watchNamespaces: ["shop"],
  operatorPlacement: "external",
  webhooks: { url: "https://127.0.0.1:9443" },
  policy: readmePolicy(),
};

test("the policy example is self-contained: only names the README's own project declares", () => {
  const index = readmeProjectFiles().get("index.ts")!;
  for (const name of ["cluster", "shop", "operatorImage"]) assert.match(index, new RegExp(`^const ${name} = `, "m"));
  assert.doesNotMatch(program, /\bimage,/, "no undefined `image` shorthand");
  assert.match(program, /image: operatorImage, policy \}/);
  assert.ok(program.includes('webhooks: { url: "https://127.0.0.1:9443" },'), program);
});

test("the policy example resolves on both placements of the README's program", () => {
  const inCluster = resolveSettings("shop-platform", {
    namespace: "shop-platform",
    watchNamespaces: ["shop"],
    image: "registry.example.com/myapp-operator:0.2.0",
    policy: readmePolicy(),
  });
  assert.ok(inCluster.ok, JSON.stringify(inCluster));
  const outside = resolveSettings("shop-platform", external);
  assert.ok(outside.ok, JSON.stringify(outside));
  // Without the URL an external platform has no webhooks, and the policy is refused naming what to set
  const withoutUrl = resolveSettings("shop-platform", { ...external, webhooks: {} });
  assert.equal(withoutUrl.ok, false);
});

test("the README's command for the external operator with the policy is the one externalOperatorFlags lists", () => {
  const command = /^KUBECONFIG=\S+ npx --no-install myapp-operator((?:.*\\\n)*.*)$/m.exec(section)?.[1];
  assert.ok(command, "the section has the external operator's command");
  const documented = command.replaceAll("\\\n", " ").split(/\s+/).filter(Boolean);
  const settings = resolveSettings("shop-platform", external);
  assert.ok(settings.ok);
  const listed = externalOperatorFlags(settings.settings)!;
  assert.ok(listed.includes("--webhook-bind-address=127.0.0.1:9443"), listed.join(" "));
  // The same operator, flag for flag, where the README leaves out only flags at their defaults
  assert.deepEqual(parseOptions(documented, {}), parseOptions(listed, {}));
});
