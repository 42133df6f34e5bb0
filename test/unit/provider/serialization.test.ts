import * as pulumi from "@pulumi/pulumi";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { unknownValue } from "../../../provider/inputs.ts";
import { myAppInstanceProvider } from "../../../provider/provider.ts";

// Every resource's state carries the serialized provider, so it must stay small, and it must capture neither
// credentials (pulumi/pulumi#8265) nor a zod schema (which does not serialize, #5294).

/** Serializes the provider exactly as pulumi.dynamic.Resource does. */
async function serialized(): Promise<string> {
  const result = await pulumi.runtime.serializeFunction(() => myAppInstanceProvider, { allowSecrets: true });
  return result.text;
}

test("the serialized provider is under 4 KiB and captures only the implementation's package specifier", async () => {
  const text = await serialized();
  assert.ok(text.length < 4096, `serialized provider is ${text.length} bytes`);
  const captured = [...text.matchAll(/with\(\{ (.*?), this: undefined/g)].flatMap((m) =>
    m[1]!.split(", ").map((binding) => binding.split(":")[0]),
  );
  assert.deepEqual([...new Set(captured)].sort(), ["implementation", "load", "myAppInstanceProvider"]);
  assert.match(text, /implementation: "myapp-platform\/provider-impl"/);
});

test("it names no path: state written here works from another clone, directory or machine", async () => {
  const text = await serialized();
  assert.equal(text.includes("file://"), false, "a file URL");
  assert.equal(text.includes(process.cwd()), false, "this checkout's path");
  assert.equal(/impl\.(ts|js)/.test(text), false, "a file name of the implementation");
});

test("it names no schema, client or credential", async () => {
  const text = await serialized();
  for (const word of ["zod", "KubeConfig", "KubeClient", "kubeconfig", "token", "client-key", "password"]) {
    assert.equal(text.includes(word), false, `serialized provider mentions ${word}`);
  }
});

test("deserialized as the dynamic-provider host does, it loads the implementation and checks", async () => {
  // GIVEN the provider rebuilt from its text with require-from-string (what cmd/dynamic-provider uses)
  const require = createRequire(import.meta.url);
  const requireFromString = require("require-from-string") as (code: string) => {
    handler: () => pulumi.dynamic.ResourceProvider;
  };
  const provider = requireFromString(await serialized()).handler();
  // WHEN it checks inputs with an unknown value (so no cluster is asked)
  const result = await provider.check!(
    {},
    { image: unknownValue, replicas: 2, owner: "organization/shop/dev", logicalName: "web" },
  );
  // THEN the implementation ran: defaults applied, the unknown kept
  assert.deepEqual(result.failures ?? [], []);
  assert.equal(result.inputs.image, unknownValue);
  assert.equal(result.inputs.port, 8080);
  assert.match(result.inputs.name, /^web-[0-9a-f]{8}$/);
});
