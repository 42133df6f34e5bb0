/** The pulumi toolchain is real: engine, our nodejs language host, the kubernetes plugin and dynamic providers. */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { adminClient, testNamespace, type Typed } from "../support/cluster.ts";
import { testStack } from "../support/pulumi.ts";

const workDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures/smoke");

test("a program with a ConfigMap and a dynamic resource: preview, up, destroy", async (t) => {
  const client = adminClient();
  const namespace = await testNamespace(t, client, "smoke");
  const stack = await testStack(t, workDir, { namespace });

  const preview = await stack.preview();
  assert.equal(preview.changeSummary.create, 4, "stack, provider, ConfigMap and the dynamic resource");

  const up = await stack.up();
  assert.equal(up.summary.result, "succeeded");
  assert.equal(up.outputs.echoLength?.value, "dynamic".length, "the dynamic provider ran");
  // the language host's preload: TypeScript and arborist unloaded until the closure serializer needed them
  assert.deepEqual(up.outputs.loadedAtStart?.value, { typescript: false, npmcli: 1 });
  const name = up.outputs.configMapName?.value as string;
  const live = await client.get<Typed<{ data: Record<string, string> }>>("v1", "ConfigMap", name, namespace);
  assert.deepEqual(live.data, { greeting: "hello" });

  const destroy = await stack.destroy();
  assert.equal(destroy.summary.result, "succeeded");
  assert.equal(await client.find("v1", "ConfigMap", name, namespace), undefined, "destroy removed the ConfigMap");
});
