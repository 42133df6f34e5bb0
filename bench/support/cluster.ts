/** The local cluster as the benchmarks use it: an admin client, throwaway namespaces, the CRD. */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { apiVersion, crdName, findCondition, kind, type Condition } from "../../api/index.ts";
import { crdPath } from "../../api/crd-path.ts";
import { KubeClient, loadKubeConfig, type ClientOptions, type KubeObject } from "../../kube/index.ts";
import { waitUntil } from "./wait.ts";

/** The field manager of everything the benchmarks write. */
export const benchFieldManager = "myapp-bench";

/** Admin client from KUBECONFIG (.local/kubeconfig of `npm run cluster -- up`). */
export function adminClient(options: ClientOptions = {}): KubeClient {
  const path = process.env.KUBECONFIG;
  if (!path) {
    throw new Error("KUBECONFIG is not set: export KUBECONFIG=$PWD/.local/kubeconfig (after `npm run cluster -- up`)");
  }
  return new KubeClient(loadKubeConfig({ path }), options);
}

/** Creates a namespace `<prefix>-<6 hex>` and returns its name. */
export async function createNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels: { "myapp-bench": "true" } } });
  return name;
}

/** Asks for the namespace's deletion; true if it was there. */
export function deleteNamespace(client: KubeClient, name: string): Promise<boolean> {
  return client.delete("v1", "Namespace", name);
}

/**
 * Installs the committed CRD unless it is already Established (server-side apply, forced, as "myapp-bench"), and
 * waits until MyAppInstances are served.
 */
export async function ensureCrd(client: KubeClient, signal: AbortSignal): Promise<void> {
  const established = async () => {
    const live = await client.find<KubeObject & { status?: { conditions?: Condition[] } }>(
      "apiextensions.k8s.io/v1",
      "CustomResourceDefinition",
      crdName,
    );
    return findCondition(live?.status?.conditions, "Established")?.status === "True";
  };
  if (!(await established())) {
    await client.apply(parse(readFileSync(crdPath, "utf8")) as KubeObject, {
      fieldManager: benchFieldManager,
      force: true,
    });
    await waitUntil(`CRD ${crdName} to be Established`, async () => ((await established()) ? true : undefined), {
      signal,
    });
  }
  await waitUntil(`${kind} to be served`, async () => (await client.list(apiVersion, kind, { limit: 1 })) && true, {
    signal,
  });
}
