/**
 * ClusterProvider: a pulumi-kubernetes Provider that remembers how it was told to connect. A plain `k8s.Provider`
 * hands its kubeconfig and context to a program only as outputs, and a preview leaves an output the engine has no
 * value for unknown: `context` when none was given (always), and both while the provider itself is replaced. A
 * MyAppOperator on a ClusterProvider passes its instances the inputs instead, so `pulumi preview` knows which
 * cluster they will reach, and an instance whose platform was pointed at another cluster fails the preview naming
 * both clusters, before anything changes in either.
 */
import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";

/** The connection inputs a ClusterProvider was given, as given (a path or the text; absent means KUBECONFIG). */
export interface ClusterProviderConnection {
  readonly kubeconfig?: pulumi.Input<string> | undefined;
  readonly context?: pulumi.Input<string> | undefined;
}

/**
 * Exactly a `k8s.Provider` (same type token, same behaviour; swapping one for the other changes nothing in the
 * stack) that also keeps {@link ClusterProviderConnection}. Use it for everything else of yours on that cluster too.
 *
 * @example
 * const cluster = new ClusterProvider("cluster", { kubeconfig: config.get("kubeconfig") });
 * const platform = new MyAppOperator("shop-platform", { namespace: "shop-platform", image }, { provider: cluster });
 */
export class ClusterProvider extends k8s.Provider {
  /** The kubeconfig and context this provider was given. */
  readonly connectionInputs: ClusterProviderConnection;

  constructor(name: string, args: k8s.ProviderArgs = {}, opts?: pulumi.ResourceOptions) {
    super(name, args, opts);
    this.connectionInputs = {
      // As k8s.Provider does: no kubeconfig means the KUBECONFIG of the process that runs the program.
      kubeconfig: args.kubeconfig ?? process.env["KUBECONFIG"],
      context: args.context,
    };
  }
}

/** The connection a provider remembers, when it is a ClusterProvider (of this or another copy of the package). */
export function rememberedConnection(provider: pulumi.ProviderResource): ClusterProviderConnection | undefined {
  const connection = (provider as { connectionInputs?: unknown }).connectionInputs;
  return typeof connection === "object" && connection !== null ? (connection as ClusterProviderConnection) : undefined;
}
