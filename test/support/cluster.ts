/** Test support for the real local cluster: an admin client, throwaway namespaces, waiting on conditions. */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { TestContext } from "node:test";
import { promisify } from "node:util";
import { apiVersion, kind } from "../../api/index.ts";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { toolchainBinDir } from "../../tools/lib/paths.ts";
export { waitFor } from "../../tools/lib/progress.ts";

const execFileAsync = promisify(execFile);

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

/**
 * Creates namespace `name` for a test's instances; the cleanup handed to `defer` first removes our finalizer from
 * every MyAppInstance in it (the operator is gone by then, and a finalizer nobody removes would keep the namespace
 * Terminating forever), then deletes it.
 */
export async function namespaceReleasingInstances(
  client: KubeClient,
  defer: (step: () => Promise<void>) => void,
  name: string,
): Promise<string> {
  await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  defer(async () => {
    const instances = await client.list(apiVersion, kind, { namespace: name }).catch(() => ({ items: [] }));
    for (const instance of instances.items) {
      await client
        .mergePatch(apiVersion, kind, instance.metadata.name ?? "", name, { metadata: { finalizers: null } })
        .catch(() => undefined);
    }
    await client.delete("v1", "Namespace", name).catch(() => undefined);
  });
  return name;
}

/** The toolchain's kubectl against the test cluster (KUBECONFIG); its stdout, or a rejection with its stderr. */
export async function kubectl(...args: string[]): Promise<string> {
  const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
  const { stdout } = await execFileAsync(path.join(binDir, "kubectl"), [
    "--kubeconfig",
    process.env.KUBECONFIG!,
    ...args,
  ]);
  return stdout;
}

/**
 * A Service `name` controlled by someone else (a ConfigMap `<name>-owner`), as a clash for an instance of that
 * name: the operator must not take it over.
 */
export async function createForeignService(client: KubeClient, namespace: string, name: string): Promise<void> {
  const owner = await client.create<KubeObject>({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `${name}-owner`, namespace },
  });
  await client.create({
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace,
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: `${name}-owner`, uid: owner.metadata.uid!, controller: true },
      ],
    },
    spec: { ports: [{ port: 80 }] },
  });
}
