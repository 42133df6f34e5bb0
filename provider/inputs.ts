/**
 * The shapes that cross the Pulumi engine boundary: the flat input bag the engine stores and diffs, and the
 * output bag create/update/read return. Kept flat on purpose: the Node dynamic-provider host reports
 * replacements by top-level key only, so every field a user can change is a top-level key.
 */
import { myAppInstanceSpecSchema, type MyAppInstanceSpec, type MyAppInstanceStatus } from "../api/index.ts";
import type { ClusterIdentity } from "../kube/cluster-identity.ts";

/** What the engine sends in place of a value that is not known yet (during preview). */
export const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True when the engine marked this value as not known until apply. */
export function isUnknown(value: unknown): boolean {
  return value === unknownValue;
}

/**
 * True when `value` is unknown or holds an unknown anywhere inside: the engine marks a value of an object input
 * (`resources.limits.memory`, `values.a`, `chart.oci`) at its own depth, and the object is not known until apply.
 */
export function containsUnknown(value: unknown): boolean {
  if (isUnknown(value)) return true;
  if (value === null || typeof value !== "object") return false;
  const pending: object[] = [value];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    for (const child of Object.values(node)) {
      if (isUnknown(child)) return true;
      if (child !== null && typeof child === "object") pending.push(child);
    }
  }
  return false;
}

/** The field manager of every write the provider makes, so `managedFields` show who owns what. */
export const fieldManager = "pulumi-myapp-provider";

/**
 * Ownership marker, part one: the stack (`organization/project/stack`) that manages the object. create adopts an
 * object that already exists only when this annotation and {@link resourceAnnotation} both match.
 */
export const stackAnnotation = "myapp.example.com/pulumi-stack";

/** Ownership marker, part two: the Pulumi resource name, so two resources of one stack never share an object. */
export const resourceAnnotation = "myapp.example.com/pulumi-resource";

/**
 * A token each create writes on the object and keeps in the state: the object a state entry may delete is the one
 * it created or adopted, not one a later create of the same resource took over (a replacement's original, left
 * pending deletion by a failed `up`, whose object the next `up` adopts back, must not delete it).
 */
export const incarnationAnnotation = "myapp.example.com/pulumi-incarnation";

/** Namespace when none is given. */
export const defaultNamespace = "default";

/** Default wait for Ready on create/update, and for the finalizer on delete. */
export const defaultTimeoutSeconds = 600;

/** Longest wait a user may ask for: one day. */
export const maxTimeoutSeconds = 86_400;

/**
 * The checked input bag, as stored in state: every field of the spec (defaults applied), as a top-level key, plus
 * where the object lives and how to reach it. `owner` and `logicalName` are set by the resource class, not by
 * users: they are the ownership marker and the prefix of the auto-name.
 */
export interface InstanceInputs extends Readonly<MyAppInstanceSpec> {
  readonly name: string;
  readonly namespace: string;
  /** Kubeconfig contents; a Pulumi secret. Absent: KUBECONFIG or ~/.kube/config, as kubectl. */
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly timeoutSeconds: number;
  /** `organization/project/stack` of the stack that declared the resource. */
  readonly owner: string;
  /** The Pulumi resource name: the prefix of the auto-name and the second ownership marker. */
  readonly logicalName: string;
}

/** A field of the spec, and so an input key. */
export type SpecKey = keyof typeof myAppInstanceSpecSchema.shape;

/**
 * The input keys that are the object's spec: every field of the api's spec schema, taken from the schema itself,
 * so a new spec field is checked, applied, refreshed and diffed without a change here. Each is a top-level key,
 * so `replaces` can name it.
 */
export const specKeys = Object.keys(myAppInstanceSpecSchema.shape) as readonly SpecKey[];

/**
 * Keys that say how to reach the cluster and how long to wait: stored with the instance (refresh and destroy use
 * them) but not part of it, so a rotated kubeconfig or a new timeout is no change of the instance.
 */
export const operationKeys = ["kubeconfig", "context", "timeoutSeconds"] as const;

/** Every key of {@link InstanceInputs}, in display order. */
export const inputKeys = [
  "name",
  "namespace",
  ...specKeys,
  "kubeconfig",
  "context",
  "timeoutSeconds",
  "owner",
  "logicalName",
] as const;

/** One key of {@link InstanceInputs}. */
export type InputKey = (typeof inputKeys)[number];

/**
 * Outputs that follow from the inputs alone. check adds them to the checked inputs, so a preview (which shows a
 * dynamic resource's inputs as its outputs) knows them instead of showing them as unknown.
 */
export interface DerivedOutputs {
  readonly serviceName: string;
  /** In-cluster `host:port` of the instance's Service. */
  readonly endpoint: string;
}

/** What create/update/read return: the inputs plus what the cluster computed. */
export interface InstanceOutputs extends InstanceInputs, DerivedOutputs {
  /** The cluster the object was created in; read, update and delete act only there. */
  readonly cluster?: ClusterIdentity;
  readonly uid: string;
  /**
   * The {@link incarnationAnnotation} this entry's create wrote, kept through a refresh even when the object now
   * carries another's; absent in states written before it existed.
   */
  readonly incarnation?: string;
  readonly generation: number;
  /** The operator's view: conditions, observedGeneration, replicas, readyReplicas, phase, image, message. */
  readonly status: MyAppInstanceStatus;
}

/** A loosely typed property bag, as the engine hands it over. */
export type PropertyBag = Readonly<Record<string, unknown>>;
