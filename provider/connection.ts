/**
 * The cluster connection of an operation: the explicit kubeconfig input (a secret) if given, else KUBECONFIG or
 * ~/.kube/config as kubectl finds them. Never stored in the serialized provider, so credentials stay out of it,
 * and errors never quote the kubeconfig (a YAML error could echo a token). One client per distinct connection
 * and process: a preview of a hundred instances on one cluster shares one client instead of building a hundred.
 */
import { createHash } from "node:crypto";
import { serverOf } from "../kube/cluster-identity.ts";
import { KubeClient, loadKubeConfig } from "../kube/index.ts";

/** The inputs that say how to reach the cluster. */
export interface ConnectionInputs {
  readonly kubeconfig?: string | undefined;
  readonly context?: string | undefined;
}

const clients = new Map<string, KubeClient>();

/** A client for the cluster `inputs` name, or an error that says which source failed and what to do. */
export function connect(inputs: ConnectionInputs): KubeClient {
  const key = connectionKey(inputs);
  const cached = clients.get(key);
  if (cached) return cached;
  const source = inputs.kubeconfig
    ? "the kubeconfig input"
    : process.env["KUBECONFIG"]
      ? "the file(s) in KUBECONFIG"
      : "~/.kube/config";
  let config;
  try {
    config = loadKubeConfig({
      ...(inputs.kubeconfig ? { kubeconfig: inputs.kubeconfig } : {}),
      ...(inputs.context ? { context: inputs.context } : {}),
    });
  } catch (error) {
    const detail = inputs.kubeconfig ? redactedReason(error) : error instanceof Error ? error.message : String(error);
    throw new Error(`Cannot load cluster credentials from ${source}: ${detail}`);
  }
  const client = new KubeClient(config);
  clients.set(key, client);
  return client;
}

const unreachable = new WeakMap<KubeClient, string>();

/**
 * Remembers, for the rest of this process (one preview or update), that no apiserver answered `client`, and
 * returns the message that says so: every later instance on the same connection fails at once with it, instead of
 * waiting out its own connect timeout.
 */
export function markUnreachable(client: KubeClient, cause: string): string {
  const message =
    `cannot reach the cluster at ${serverOf(client)}: ${cause}. Check the kubeconfig and context the instance ` +
    "uses (or that the cluster runs): instances are previewed against their cluster";
  unreachable.set(client, message);
  return message;
}

/** The message of an earlier {@link markUnreachable} for `client`, if any. */
export function unreachableMessage(client: KubeClient): string | undefined {
  return unreachable.get(client);
}

const slow = new WeakMap<KubeClient, string>();

/**
 * Remembers, for the rest of this process, that a dry-run on `client` outlasted its time although the apiserver
 * answers (slow admission): later instances skip theirs with the same note instead of each waiting it out, since
 * the engine checks one resource at a time.
 */
export function markSlow(client: KubeClient, note: string): void {
  slow.set(client, note);
}

/** The note of an earlier {@link markSlow} for `client`, if any. */
export function slowNote(client: KubeClient): string | undefined {
  return slow.get(client);
}

// A digest, so the map holds no credentials as keys; the ambient source counts as part of the connection. The
// last one is remembered: a preview asks for the same connection for every instance, and hashing a kubeconfig
// each time was a visible part of a diff.
function connectionKey(inputs: ConnectionInputs): string {
  const source = inputs.kubeconfig || `env:${process.env["KUBECONFIG"] ?? "~/.kube/config"}`;
  const context = inputs.context ?? "";
  if (lastKey?.source === source && lastKey.context === context) return lastKey.key;
  const key = createHash("sha256")
    .update(JSON.stringify([source, context]))
    .digest("hex");
  lastKey = { source, context, key };
  return key;
}

let lastKey: { source: string; context: string; key: string } | undefined;

// Only our own, content-free messages pass; a parser's message may quote the text it choked on.
function redactedReason(error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  if (/^kubeconfig (has no context|names no current cluster)/.test(message)) return message;
  return "it is not a valid kubeconfig (details withheld: the text is a secret)";
}
