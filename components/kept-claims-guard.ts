/**
 * A guard for a Namespace declared in the same stack as instances with storage. Deleting a namespace deletes every
 * volume claim in it, so a `pulumi destroy` (or a replace of the Namespace) would take the claims the platform
 * keeps (`storageReclaimPolicy: Retain`, the default) and their data with it. Attached as the Namespace's
 * `beforeDelete` hook, the guard reads the namespace first:
 * - in a preview, it warns, naming each claim and the ways out;
 * - in `pulumi up` / `pulumi destroy`, it refuses the delete with the same message: nothing is lost implicitly.
 * A namespace without kept claims goes as usual.
 *
 * Pulumi's resource hooks are the one place a program sees a delete coming, in a preview too (`onDryRun`); the
 * instances' dynamic provider never hears of the Namespace. A delete hook lives in the program, so `pulumi destroy`
 * needs `--run-program` (without it Pulumi stops and asks for that flag, which loses nothing either).
 */
import * as pulumi from "@pulumi/pulumi";
import { clusterConnectionOf, type ClusterConnection } from "./cluster-connection.ts";
import { keptClaims, keptClaimsMessage } from "./kept-claims.ts";
import type { NamespaceClaims } from "./namespace-claims.ts";

/** Reads a namespace's claims and instances; a parameter so tests can give their own. */
export type NamespaceClaimsReader = (connection: ClusterConnection, namespace: string) => Promise<NamespaceClaims>;

/** How long a preview's hook waits for the cluster connection to be known (a preview may never know an output). */
const connectionWaitMs = 10_000;

/**
 * A `beforeDelete` hook for a Namespace whose claims the platform keeps.
 *
 * @param name unique in the program (Pulumi names hooks, and a delete finds its hook by that name).
 * @param provider the Kubernetes provider the Namespace is declared with; a ClusterProvider lets previews read the
 *   cluster (a plain provider's connection is known only in `up`). Absent: the default provider's configuration.
 *
 * @example
 * const shop = new k8s.core.v1.Namespace("shop", { metadata: { name: "shop" } }, {
 *   provider: cluster,
 *   hooks: { beforeDelete: [keptClaimsGuard("shop-kept-claims", cluster)] },
 * });
 */
export function keptClaimsGuard(
  name: string,
  provider?: pulumi.ProviderResource,
  readClaims?: NamespaceClaimsReader,
): pulumi.ResourceHook {
  const output = clusterConnectionOf(provider);
  const connection = new Promise<ClusterConnection>((resolve) => output.apply((value) => resolve(value)));
  return new pulumi.ResourceHook(name, (args) => guardNamespace(args, connection, readClaims), { onDryRun: true });
}

/** The hook's body: warn (preview) or refuse (update, destroy) when the namespace holds kept claims. */
export async function guardNamespace(
  args: pulumi.ResourceHookArgs,
  connection: Promise<ClusterConnection>,
  readClaims?: NamespaceClaimsReader,
  preview: boolean = pulumi.runtime.isDryRun(),
): Promise<void> {
  const namespace = namespaceName(args);
  // A preview may never know an output (it has no value for it): wait a while. An update always learns it.
  const known = preview ? await within(connection, connectionWaitMs) : await connection;
  const subject = `namespace ${namespace}`;
  if (!known) {
    // Only a preview can lack it (an output it has no value for); `up` always knows, and checks then.
    void pulumi.log.warn(`${subject}: could not check for kept volume claims: the cluster connection is not known yet`);
    return;
  }
  const read = await (readClaims ?? (await import("./namespace-claims.ts")).readNamespaceClaims)(known, namespace);
  if ("unavailable" in read) {
    const message = `${subject}: could not check for volume claims the platform keeps (${read.unavailable})`;
    if (preview) {
      void pulumi.log.warn(message);
      return;
    }
    // Not knowing is not permission: the delete waits until the claims can be read.
    throw new Error(`Refusing to delete ${subject}: ${message.slice(subject.length + 2)}`);
  }
  const kept = keptClaims(read.claims, read.instances);
  if (kept.length === 0) return;
  if (preview) void pulumi.log.warn(keptClaimsMessage(namespace, kept, false));
  else throw new Error(keptClaimsMessage(namespace, kept, true));
}

/** The Namespace's name: its outputs' metadata.name, else its ID (a Namespace's ID is its name). */
function namespaceName(args: pulumi.ResourceHookArgs): string {
  const metadata = (args.oldOutputs?.["metadata"] ?? args.oldInputs?.["metadata"]) as { name?: unknown } | undefined;
  return typeof metadata?.name === "string" && metadata.name !== "" ? metadata.name : String(args.id);
}

/** `promise`'s value, or undefined when it has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
