/** Test support for the real local cluster: an admin client, throwaway namespaces, waiting on conditions. */
import { randomBytes } from "node:crypto";
import type { TestContext } from "node:test";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
export { waitFor } from "../../tools/lib/progress.ts";

/** Admin client from the KUBECONFIG the test harness sets (.local/kubeconfig). */
export function adminClient(): KubeClient {
  if (!process.env.KUBECONFIG) throw new Error("KUBECONFIG is not set: run the tests with `npm test`");
  return new KubeClient(loadKubeConfig({ path: process.env.KUBECONFIG }));
}

/** A fresh namespace for one test, deleted when the test ends. */
export async function testNamespace(t: TestContext, client: KubeClient, prefix = "t"): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  t.after(() => client.delete("v1", "Namespace", name).then(() => undefined));
  return name;
}

export type Typed<T> = KubeObject & T;
