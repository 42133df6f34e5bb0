/**
 * How to reach the cluster a MyAppOperator is installed in, for the MyAppInstances declared on it: the same
 * kubeconfig and context as the component's Kubernetes provider, as kubeconfig text (a path is read when the
 * program runs, so the stack's state does not depend on a file of this machine), always a secret.
 */
import * as pulumi from "@pulumi/pulumi";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { rememberedConnection } from "./cluster-provider.ts";

/** Kubeconfig text and, optionally, the context of it to use. */
export interface ClusterConnection {
  /** Undefined when the provider names a file this machine does not have: `source` says which. */
  readonly kubeconfig: string | undefined;
  readonly context?: string;
  /** Where the kubeconfig came from, for error messages (never the text). */
  readonly source: string;
}

/** The inputs a pulumi-kubernetes Provider keeps as output properties of the same names. */
interface KubernetesProviderProperties {
  readonly kubeconfig?: pulumi.Input<string | undefined>;
  readonly context?: pulumi.Input<string | undefined>;
}

/**
 * The connection of `provider` (a pulumi-kubernetes Provider), or of the default provider when there is none:
 * the stack's `kubernetes:kubeconfig` / `kubernetes:context` config, else KUBECONFIG, else ~/.kube/config.
 *
 * A ClusterProvider's own inputs are known in previews. A plain Provider's are read from its outputs, and a
 * preview leaves an output unknown when the engine holds no value for it (a context that was never given, in every
 * preview): the instances' preview then cannot check which cluster they reach, and only `up` does.
 */
export function clusterConnectionOf(provider: pulumi.ProviderResource | undefined): pulumi.Output<ClusterConnection> {
  const config = new pulumi.Config("kubernetes");
  const inputs: KubernetesProviderProperties = provider
    ? (rememberedConnection(provider) ?? (provider as KubernetesProviderProperties))
    : { kubeconfig: pulumi.output(config.get("kubeconfig")), context: pulumi.output(config.get("context")) };
  const kubeconfig = pulumi.output(inputs.kubeconfig);
  const context = pulumi.output(inputs.context);
  return pulumi.secret(
    pulumi.all([kubeconfig, context]).apply(([value, name]) => ({
      ...kubeconfigText(value),
      ...(name ? { context: name } : {}),
    })),
  );
}

/**
 * Kubeconfig text from what a pulumi-kubernetes Provider accepts: the text itself, or a path (the first of a
 * KUBECONFIG list); nothing means KUBECONFIG, then ~/.kube/config, as kubectl.
 */
export function kubeconfigText(
  value: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { kubeconfig: string | undefined; source: string } {
  if (value !== undefined && /[\n{]/.test(value))
    return { kubeconfig: value, source: "the provider's kubeconfig text" };
  const candidate = value ?? env["KUBECONFIG"]?.split(path.delimiter).find((entry) => entry !== "");
  const file = candidate ?? path.join(homedir(), ".kube", "config");
  return { kubeconfig: existsSync(file) ? readFileSync(file, "utf8") : undefined, source: `the file ${file}` };
}
