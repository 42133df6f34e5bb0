/**
 * The cluster connection of one operation: the explicit kubeconfig input (a secret) if given, else KUBECONFIG or
 * ~/.kube/config as kubectl finds them. Built per call and never stored, so credentials stay out of the
 * serialized provider, and errors never quote the kubeconfig (a YAML error could echo a token).
 */
import { KubeClient, loadKubeConfig } from "../kube/index.ts";

/** The inputs that say how to reach the cluster. */
export interface ConnectionInputs {
  readonly kubeconfig?: string | undefined;
  readonly context?: string | undefined;
}

/** A client for the cluster `inputs` name, or an error that says which source failed and what to do. */
export function connect(inputs: ConnectionInputs): KubeClient {
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
  return new KubeClient(config);
}

// Only our own, content-free messages pass; a parser's message may quote the text it choked on.
function redactedReason(error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  if (/^kubeconfig (has no context|names no current cluster)/.test(message)) return message;
  return "it is not a valid kubeconfig (details withheld: the text is a secret)";
}
