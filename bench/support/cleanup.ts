/**
 * Removing a finished fleet fast. Deleting the namespace alone would leave it to the garbage collector and the
 * namespace controller, which the local controller-manager throttles (20 requests/s): minutes for 1000 instances,
 * time the next subject would wait. With the operator already stopped, this drops the instances' finalizers and
 * deletes every kind at once with deletecollection (pods without grace), then the namespace.
 */
import { request } from "node:https";
import { apiVersion, kind } from "../../api/index.ts";
import type { KubeClient, KubeObject } from "../../kube/index.ts";
import { readUpstream } from "./counting-proxy.ts";
import { forEachLimit } from "./fleet.ts";
import { waitUntil } from "./wait.ts";

/** Collections deleted, in this order: owners first, so controllers do not re-create what goes next. */
const collections = [
  "/apis/example.com/v1/namespaces/NS/myappinstances",
  "/apis/apps/v1/namespaces/NS/deployments",
  "/apis/apps/v1/namespaces/NS/statefulsets",
  "/apis/apps/v1/namespaces/NS/replicasets",
  "/apis/apps/v1/namespaces/NS/controllerrevisions",
  "/api/v1/namespaces/NS/services",
  "/api/v1/namespaces/NS/pods?gracePeriodSeconds=0",
  "/api/v1/namespaces/NS/persistentvolumeclaims",
];

/** DELETE of a collection as admin (KubeClient has no deletecollection), given up after `timeoutMs`. */
function deleteCollection(kubeconfig: string, path: string, timeoutMs: number): Promise<void> {
  const upstream = readUpstream(kubeconfig);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: "https:",
        hostname: upstream.url.hostname,
        port: upstream.url.port,
        method: "DELETE",
        path,
        ...(upstream.ca ? { ca: upstream.ca } : {}),
        ...(upstream.cert ? { cert: upstream.cert } : {}),
        ...(upstream.key ? { key: upstream.key } : {}),
        headers: upstream.token ? { authorization: `Bearer ${upstream.token}` } : {},
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          (res.statusCode ?? 500) < 300 || res.statusCode === 404
            ? resolve()
            : reject(new Error(`DELETE ${path}: HTTP ${res.statusCode}`)),
        );
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`DELETE ${path}: no answer in ${timeoutMs / 1000} s`)));
    req.on("error", reject);
    req.end();
  });
}

/** What a fleet holds beyond MyAppInstances and their children (another operator's instances, say). */
export interface FleetExtras {
  /** Runs first, e.g. drops the finalizers of instances of a kind the kube client does not know. */
  readonly release?: () => Promise<void>;
  /** Collections deleted before everything else (NS for the namespace): other instances, owners first. */
  readonly first?: readonly string[];
  /** Collections deleted after the children, e.g. a Helm release's Secrets. */
  readonly last?: readonly string[];
}

/** Deletes everything in `namespace` and the namespace, and waits until it is gone; seconds taken. */
export async function removeFleet(
  client: KubeClient,
  kubeconfig: string,
  namespace: string,
  signal: AbortSignal,
  log: (message: string) => void,
  extras: FleetExtras = {},
): Promise<number> {
  const from = performance.now();
  if (!(await client.find("v1", "Namespace", namespace))) return 0;
  await extras.release?.();
  const { items } = await client.list(apiVersion, kind, { namespace });
  const held = items.filter((item) => (item.metadata.finalizers ?? []).length > 0);
  await forEachLimit(
    held,
    10,
    async (item) => {
      await client
        .mergePatch(apiVersion, kind, item.metadata.name ?? "", namespace, { metadata: { finalizers: null } })
        .catch(() => undefined); // already gone
    },
    signal,
  );
  const ordered = [...(extras.first ?? []), ...collections, ...(extras.last ?? [])];
  for (const collection of ordered) {
    const path = collection.replace("NS", namespace);
    // The apiserver ends a deletecollection at its request timeout (a 504, or the connection dropped; at 10,000
    // instances under load one also hung without an answer) and keeps what it deleted: ask again until one
    // finishes. The namespace's deletion alone would leave thousands to the throttled controller-manager.
    await waitUntil(
      `deletecollection ${path}`,
      async () => {
        try {
          await deleteCollection(kubeconfig, path, 120_000);
          return true;
        } catch (error) {
          log(`${String(error)}; asking again`);
          return undefined;
        }
      },
      { signal, timeoutMs: 20 * 60_000, intervalMs: 1_000 },
    );
  }
  await client.delete("v1", "Namespace", namespace);
  await waitUntil(
    `namespace ${namespace} to be gone`,
    async () => ((await client.find("v1", "Namespace", namespace)) ? undefined : true),
    { signal, timeoutMs: 10 * 60_000, intervalMs: 1_000 },
  );
  await waitForVolumesGone(client, namespace, signal, log);
  const seconds = Math.round((performance.now() - from) / 100) / 10;
  log(`namespace ${namespace} removed in ${seconds} s`);
  return seconds;
}

interface Volume extends KubeObject {
  readonly spec?: {
    readonly claimRef?: { readonly namespace?: string };
    readonly persistentVolumeReclaimPolicy?: string;
  };
}

/**
 * Waits until the volumes the namespace's claims were bound to are deleted. The claims go with their namespace, but
 * their volumes outlive it: the controller-manager marks each Released (throttled, like every controller there)
 * and the provisioner deletes it: a thousand updates and deletes at 1,000 instances with storage. They usually end
 * before the namespace is gone, but nothing orders them; the next subject's round must not share the cluster with
 * them. Volumes kept by their reclaim policy are not waited for; one that does not
 * go within the wait is reported, not fatal (the next round starts anyway).
 */
async function waitForVolumesGone(
  client: KubeClient,
  namespace: string,
  signal: AbortSignal,
  log: (message: string) => void,
): Promise<void> {
  const from = performance.now();
  const left = async () =>
    (await client.list<Volume>("v1", "PersistentVolume")).items.filter(
      (volume) =>
        volume.spec?.claimRef?.namespace === namespace && volume.spec.persistentVolumeReclaimPolicy === "Delete",
    ).length;
  if ((await left()) === 0) return;
  try {
    await waitUntil(
      `the volumes of ${namespace} to be deleted`,
      async () => ((await left()) === 0 ? true : undefined),
      {
        signal,
        timeoutMs: 10 * 60_000,
        intervalMs: 1_000,
      },
    );
    log(`volumes of ${namespace} deleted in ${Math.round((performance.now() - from) / 100) / 10} s`);
  } catch (error) {
    log(`${String(error)}; going on`);
  }
}
