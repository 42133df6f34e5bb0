/**
 * MyAppInstance as a Pulumi resource: declare an instance in a stack, and `pulumi up` returns once the operator
 * reports it Ready (or fails with the operator's reason). The CRUD work happens in impl.ts.
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  MyAppInstanceSpecInput,
  MyAppInstanceStatus,
  PodSecurityLevel,
  StorageReclaimPolicy,
} from "../api/index.ts";
import { myAppInstanceProvider } from "./provider.ts";

/** The arguments of a {@link MyAppInstance}. Changing `name`, `namespace` or removing `storage` replaces it. */
export interface MyAppInstanceArgs {
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
   * Size of a persistent volume per replica, as a Kubernetes quantity such as `1Gi`. It may grow; shrinking it
   * fails the preview; removing it replaces the instance.
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
   * Kubeconfig file contents to reach the cluster with. Always stored as a secret and never an output.
   * @default KUBECONFIG or ~/.kube/config, as kubectl finds them
   */
  readonly kubeconfig?: pulumi.Input<string>;
  /**
   * Context of the kubeconfig to use.
   * @default the kubeconfig's current context
   */
  readonly context?: pulumi.Input<string>;
  /**
   * How long `pulumi up` waits for Ready (and `pulumi destroy` for the finalizer) before failing, from 1 to 86400.
   * A failed wait leaves the instance in the stack; the next `pulumi up` continues.
   * @default 600
   */
  readonly timeoutSeconds?: pulumi.Input<number>;
}

/**
 * One MyAppInstance, applied with server-side apply and awaited until the operator reports Ready=True for the
 * applied generation. An object of the same name that this stack did not create is never taken over.
 *
 * @example
 * const web = new MyAppInstance("web", { image: "nginx:1.27", replicas: 3, storage: "1Gi" });
 * export const endpoint = web.endpoint; // "web-1a2b3c4d.default.svc:8080"
 */
export class MyAppInstance extends pulumi.dynamic.Resource {
  /** Kubernetes name of the object. */
  declare readonly name: pulumi.Output<string>;
  declare readonly namespace: pulumi.Output<string>;
  declare readonly image: pulumi.Output<string>;
  declare readonly replicas: pulumi.Output<number>;
  declare readonly port: pulumi.Output<number>;
  declare readonly storage: pulumi.Output<string | undefined>;
  declare readonly storageClassName: pulumi.Output<string | undefined>;
  declare readonly storageReclaimPolicy: pulumi.Output<StorageReclaimPolicy>;
  declare readonly resources: pulumi.Output<MyAppInstanceSpecInput["resources"]>;
  declare readonly podSecurityLevel: pulumi.Output<PodSecurityLevel | undefined>;
  declare readonly timeoutSeconds: pulumi.Output<number>;
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
    const props: Record<string, unknown> = {
      name: args.name,
      namespace: args.namespace,
      image: args.image,
      replicas: args.replicas,
      port: args.port,
      storage: args.storage,
      storageClassName: args.storageClassName,
      storageReclaimPolicy: args.storageReclaimPolicy,
      resources: args.resources,
      podSecurityLevel: args.podSecurityLevel,
      kubeconfig: args.kubeconfig === undefined ? undefined : pulumi.secret(args.kubeconfig),
      context: args.context,
      timeoutSeconds: args.timeoutSeconds,
      // The ownership marker, fixed when the program runs: plain strings, nothing secret.
      owner: `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
      logicalName: name,
      // Outputs the provider computes; listed so they become properties of this object.
      uid: undefined,
      generation: undefined,
      status: undefined,
      serviceName: undefined,
      endpoint: undefined,
    };
    const secrets = [...(opts?.additionalSecretOutputs ?? []), "kubeconfig"];
    super(myAppInstanceProvider, name, props, { ...opts, additionalSecretOutputs: secrets }, "myapp", "MyAppInstance");
  }
}
