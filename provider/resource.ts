/**
 * MyAppInstance as a Pulumi resource: declare an instance in a stack, and `pulumi up` returns once the operator
 * reports it Ready (or fails with the operator's reason). The CRUD work happens in impl.ts.
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  ChartSpec,
  ChartValues,
  MyAppInstanceSpecInput,
  MyAppInstanceStatus,
  PodSecurityLevel,
  StorageReclaimPolicy,
} from "../api/index.ts";
import type { ClusterIdentity } from "../kube/cluster-identity.ts";
import { unknownArguments } from "../api/argument-names.ts";
import { chartSourcesWithDefault } from "../chart/source-policy.ts";
import { providerModuleText } from "./provider.ts";

/**
 * The platform an instance runs on: a MyAppOperator component. It says how to reach its cluster (the same
 * kubeconfig and context as its Kubernetes provider, a secret).
 */
export interface InstancePlatform extends pulumi.Resource {
  readonly clusterConnection: pulumi.Output<{
    readonly kubeconfig: string | undefined;
    readonly context?: string;
    readonly source: string;
  }>;
  /**
   * The platform's settings, when it has them (MyAppOperator): a preview then refuses what its operator would (a
   * chart from elsewhere) or never act on (a namespace it does not watch).
   */
  readonly settings?: {
    readonly name?: string;
    readonly chartSources: readonly string[];
    readonly defaultChart?: ChartSpec | undefined;
    /** Empty: every namespace. */
    readonly watchNamespaces?: readonly string[];
  };
}

/**
 * The arguments of a {@link MyAppInstance}. Changing `name` or `namespace` replaces it; removing, shrinking or
 * re-classing `storage` fails the preview.
 */
export interface MyAppInstanceArgs {
  /**
   * The MyAppOperator this instance runs on. The instance then goes to the platform's cluster (its Kubernetes
   * provider's kubeconfig and context) and is created after the platform, without `dependsOn`.
   * @default none: `kubeconfig`, or KUBECONFIG / ~/.kube/config as kubectl finds them
   */
  readonly platform?: InstancePlatform;
  /**
   * Kubernetes name of the object (an RFC 1123 subdomain). Changing it replaces the instance.
   * @default an auto-name: the resource name plus 8 hex digits derived from the stack, e.g. `web-1a2b3c4d`;
   *   kept in state once created
   */
  readonly name?: pulumi.Input<string>;
  /**
   * Namespace of the object; it must exist. Changing it replaces the instance.
   * @default "default"
   */
  readonly namespace?: pulumi.Input<string>;
  /** Container image, as an OCI reference such as `nginx:1.27`. Changing it rolls the pods out in place. */
  readonly image: pulumi.Input<string>;
  /**
   * Number of pods, from 0 to 2147483647.
   * @default 1
   */
  readonly replicas?: pulumi.Input<number>;
  /**
   * TCP port the container listens on and the Service exposes, from 1 to 65535.
   * @default 8080
   */
  readonly port?: pulumi.Input<number>;
  /**
   * Size of a persistent volume per replica, as a Kubernetes quantity such as `1Gi`. It may grow; shrinking or
   * removing it fails the preview (to drop the data on purpose, see the provider's README).
   * @default no persistent volume
   */
  readonly storage?: pulumi.Input<string>;
  /**
   * StorageClass of the volumes; needs `storage`, and cannot change once storage is set.
   * @default the cluster's default StorageClass
   */
  readonly storageClassName?: pulumi.Input<string>;
  /**
   * What happens to the volumes when the instance is deleted.
   * @default "Retain"
   */
  readonly storageReclaimPolicy?: pulumi.Input<StorageReclaimPolicy>;
  /**
   * CPU and memory requests and limits of the app's container; what is left out gets the operator's defaults.
   * @default requests `{ cpu: "100m", memory: "128Mi" }`, limits `{ memory: "512Mi" }`
   * @example { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "1Gi" } }
   */
  readonly resources?: pulumi.Input<MyAppInstanceSpecInput["resources"]>;
  /**
   * `Restricted` pods meet Pod Security's restricted level (non-root, no privilege escalation, all capabilities
   * dropped, RuntimeDefault seccomp); `Baseline` opts out, for images that must start as root.
   * @default "Restricted"
   */
  readonly podSecurityLevel?: pulumi.Input<PodSecurityLevel>;
  /**
   * A Helm chart that renders the instance's objects instead of the built-in Deployment/StatefulSet and Service:
   * `{ configMap }`, `{ oci, version }` or `{ repo, name, version }`, with an optional `digest` pin and
   * `valuePaths` (where the chart expects replicas, image and port). See the README's "Charts".
   * @default the built-in template
   */
  readonly chart?: pulumi.Input<ChartSpec>;
  /** Helm values for `chart`, merged over the chart's values.yaml (the typed fields win). */
  readonly values?: pulumi.Input<ChartValues>;
  /**
   * Kubeconfig file contents to reach the cluster with; takes precedence over `platform`'s. Always stored as a
   * secret. A new kubeconfig for the same cluster (a rotated token) is no change of the instance.
   * @default the platform's; without a platform, KUBECONFIG or ~/.kube/config, as kubectl finds them
   */
  readonly kubeconfig?: pulumi.Input<string>;
  /**
   * Context of the kubeconfig to use.
   * @default the platform's context; else the kubeconfig's current context
   */
  readonly context?: pulumi.Input<string>;
  /**
   * How long `pulumi up` waits for Ready (and `pulumi destroy` for the finalizer) before failing, from 1 to 86400.
   * A failed wait leaves the instance in the stack; the next `pulumi up` continues.
   * @default 600
   */
  readonly timeoutSeconds?: pulumi.Input<number>;
}

/** Every argument of {@link MyAppInstanceArgs} (the type makes this list whole): others are refused by name. */
const argumentNames = Object.keys({
  platform: true,
  name: true,
  namespace: true,
  image: true,
  replicas: true,
  port: true,
  storage: true,
  storageClassName: true,
  storageReclaimPolicy: true,
  resources: true,
  podSecurityLevel: true,
  chart: true,
  values: true,
  kubeconfig: true,
  context: true,
  timeoutSeconds: true,
} satisfies Record<keyof MyAppInstanceArgs, true>);

/**
 * One MyAppInstance, applied with server-side apply and awaited until the operator reports Ready=True for the
 * applied generation. An object of the same name that this stack did not create is never taken over.
 *
 * Every operation verifies that it reaches the cluster the instance was created in (its API server URL and
 * `kube-system` namespace uid, the `cluster` output) and fails, changing nothing, when it does not.
 *
 * @example
 * const web = new MyAppInstance("web", { platform, image: "nginx:1.27", replicas: 3, storage: "1Gi" });
 * export const endpoint = web.endpoint; // "web-1a2b3c4d.default.svc:8080"
 */
export class MyAppInstance extends pulumi.CustomResource {
  /** Kubernetes name of the object. */
  declare readonly name: pulumi.Output<string>;
  declare readonly namespace: pulumi.Output<string>;
  declare readonly image: pulumi.Output<string>;
  declare readonly replicas: pulumi.Output<number>;
  declare readonly port: pulumi.Output<number>;
  declare readonly storage: pulumi.Output<string | undefined>;
  declare readonly storageClassName: pulumi.Output<string | undefined>;
  declare readonly storageReclaimPolicy: pulumi.Output<StorageReclaimPolicy>;
  declare readonly chart: pulumi.Output<ChartSpec | undefined>;
  declare readonly values: pulumi.Output<ChartValues | undefined>;
  declare readonly resources: pulumi.Output<MyAppInstanceSpecInput["resources"]>;
  declare readonly podSecurityLevel: pulumi.Output<PodSecurityLevel | undefined>;
  declare readonly timeoutSeconds: pulumi.Output<number>;
  /** The cluster the instance lives in: API server URL and `kube-system` namespace uid. */
  declare readonly cluster: pulumi.Output<ClusterIdentity>;
  /** The object's metadata.uid. */
  declare readonly uid: pulumi.Output<string>;
  /** The object's metadata.generation when it was last applied and Ready. */
  declare readonly generation: pulumi.Output<number>;
  /** The operator's status: phase, replicas, readyReplicas, image, message and conditions. */
  declare readonly status: pulumi.Output<MyAppInstanceStatus>;
  /** Name of the instance's Service. */
  declare readonly serviceName: pulumi.Output<string>;
  /** In-cluster address of the Service, `host:port`, e.g. `web-1a2b3c4d.default.svc:8080`. */
  declare readonly endpoint: pulumi.Output<string>;

  constructor(name: string, args: MyAppInstanceArgs, opts?: pulumi.CustomResourceOptions) {
    const unknown = [...shapeProblems(args), ...unknownArguments(args, argumentNames)];
    if (unknown.length > 0) {
      // RunError: the program stops with this message alone, not a stack trace of the user's program.
      throw new pulumi.RunError(
        [`MyAppInstance "${name}" has invalid arguments:`, ...unknown.map((u) => `  ${u.field}: ${u.message}`)].join(
          "\n",
        ),
      );
    }
    const connection = instanceConnection(name, args);
    const props: Record<string, unknown> = {
      name: args.name,
      namespace: args.namespace,
      image: args.image,
      replicas: args.replicas,
      port: args.port,
      storage: args.storage,
      storageClassName: args.storageClassName,
      storageReclaimPolicy: args.storageReclaimPolicy,
      chart: args.chart,
      values: args.values,
      resources: args.resources,
      podSecurityLevel: args.podSecurityLevel,
      kubeconfig: connection.kubeconfig,
      context: connection.context,
      timeoutSeconds: args.timeoutSeconds,
      // The ownership marker, fixed when the program runs: plain strings, nothing secret.
      owner: `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
      logicalName: name,
      // The platform's chart sources, so a preview refuses a chart from elsewhere as the operator would, without
      // a request (see chart-preview.ts). Not an input either: check drops it.
      platformChartSources: platformChartSources(args.platform),
      // The namespaces the platform's operator watches, so check refuses one it never acts on. Dropped as above.
      platformNamespaces: platformNamespaces(args.platform),
      // Whether the engine is previewing: check asks the apiserver only then (see impl.ts). Not an input of the
      // instance: check drops it, so it is never stored or diffed.
      previewing: pulumi.runtime.isDryRun(),
      // Outputs the provider computes; listed so they become properties of this object.
      cluster: undefined,
      uid: undefined,
      generation: undefined,
      status: undefined,
      serviceName: undefined,
      endpoint: undefined,
    };
    const secrets = [...(opts?.additionalSecretOutputs ?? []), "kubeconfig"];
    // The platform orders the instance after itself: its CRD must be Established first.
    const ordered = args.platform ? pulumi.mergeOptions(opts, { dependsOn: [args.platform] }) : opts;
    // What pulumi.dynamic.Resource registers (the same type, hence the same URNs and the same dynamic-provider
    // host), with the provider's text written out instead of serialized from its closure: see provider.ts.
    // Registration captures a stack trace for each of four promises per property (pulumi's debuggablePromise, for
    // leak reports), and formats each through source-map-support: with this resource's 25 properties, most of a
    // program's CPU at 100 instances, and the engine sees no registration (so starts no provider) until the loop
    // declaring them is done. The resource's own source position does not use this limit (Resource.callsites
    // raises it itself). Left empty: those leak-report stacks, and the frames of the error pulumi prepares for a
    // failed registration, whose message still names the resource.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(
        "pulumi-nodejs:dynamic/myapp:MyAppInstance",
        name,
        { ...props, __provider: providerModuleText },
        { ...ordered, additionalSecretOutputs: secrets },
      );
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
  }
}

/**
 * What is wrong with `args` as a whole, or with `platform`, before anything reads them: a program without a type
 * check may pass nothing, or a Kubernetes provider as the platform, which would fail as a TypeError naming neither.
 */
function shapeProblems(args: unknown): { field: string; message: string }[] {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return [{ field: "arguments", message: 'must be an object with at least image, such as { image: "nginx:1.27" }' }];
  }
  const platform = (args as { platform?: unknown }).platform;
  if (platform === undefined || pulumi.Output.isInstance((platform as InstancePlatform).clusterConnection)) return [];
  return [
    {
      field: "platform",
      message:
        "must be a MyAppOperator of this package (its cluster, CRD and operator); to name only a cluster, give " +
        "kubeconfig and context instead",
    },
  ];
}

/** What a preview needs of the platform's chart settings; undefined for a platform that does not say. */
export function platformChartSources(
  platform: InstancePlatform | undefined,
): { readonly sources: string[]; readonly defaultChart?: ChartSpec } | undefined {
  const settings = platform?.settings;
  if (!settings || !Array.isArray(settings.chartSources)) return undefined;
  // As the operator's chart engine allows (operator/options.ts): the list and the default chart's location.
  return {
    sources: chartSourcesWithDefault(settings.chartSources, settings.defaultChart),
    ...(settings.defaultChart ? { defaultChart: settings.defaultChart } : {}),
  };
}

/** The platform's name and the namespaces its operator watches; undefined when it watches every one, or does not say. */
export function platformNamespaces(
  platform: InstancePlatform | undefined,
): { readonly platform: string; readonly watched: string[] } | undefined {
  const watched = platform?.settings?.watchNamespaces;
  if (!Array.isArray(watched) || watched.length === 0) return undefined;
  return { platform: platform?.settings?.name ?? "the platform", watched: [...watched] };
}

/**
 * The kubeconfig and context an instance connects with: explicit ones first, else the platform's, else none (the
 * provider then reads KUBECONFIG / ~/.kube/config when it runs). Never the ambient one when a platform is given.
 */
function instanceConnection(
  name: string,
  args: MyAppInstanceArgs,
): { kubeconfig?: pulumi.Input<string>; context?: pulumi.Input<string | undefined> } {
  const platform = args.platform;
  if (args.kubeconfig !== undefined || !platform) {
    return {
      ...(args.kubeconfig !== undefined ? { kubeconfig: pulumi.secret(args.kubeconfig) } : {}),
      ...(args.context !== undefined ? { context: args.context } : {}),
    };
  }
  const kubeconfig = platform.clusterConnection.apply((connection) => {
    if (connection.kubeconfig === undefined) {
      throw new pulumi.RunError(
        `MyAppInstance "${name}": the platform's Kubernetes provider names a kubeconfig this machine does not ` +
          `have (${connection.source}): set KUBECONFIG to a kubeconfig file, or give the provider a kubeconfig ` +
          "file or its text (for example from `pulumi config set kubeconfig PATH`), or give the instance `kubeconfig`",
      );
    }
    return connection.kubeconfig;
  });
  return {
    kubeconfig: pulumi.secret(kubeconfig),
    // The context name is no secret; keeping it plain keeps it readable in diffs.
    context: args.context ?? pulumi.unsecret(platform.clusterConnection.apply((connection) => connection.context)),
  };
}
