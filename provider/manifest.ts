/**
 * Pure translations between the provider's flat inputs and the MyAppInstance object: the object to apply, the
 * outputs to store, the inputs a refresh reads back, and whether an existing object is ours to adopt.
 */
import {
  apiVersion,
  kind,
  reconcileRequestAnnotation,
  type MyAppInstanceSpec,
  type MyAppInstanceStatus,
} from "../api/index.ts";
import type { KubeObject } from "../kube/index.ts";
import { formatObjectKey } from "../kube/object-key.ts";
import {
  incarnationAnnotation,
  resourceAnnotation,
  specKeys,
  stackAnnotation,
  type DerivedOutputs,
  type InstanceInputs,
  type InstanceOutputs,
} from "./inputs.ts";
import type { ClusterIdentity } from "../kube/cluster-identity.ts";
import { serviceEndpoint, serviceName as serviceNameFor } from "../api/index.ts";

/** A MyAppInstance as read from the apiserver. */
export interface LiveInstance extends KubeObject {
  spec?: Partial<MyAppInstanceSpec>;
  status?: MyAppInstanceStatus;
}

/**
 * The object the provider applies: exactly the fields it owns (server-side apply drops what it no longer
 * states), with the ownership marker in two annotations, the state entry's `incarnation` (inputs.ts), and, when `reconcileRequest` is given, a request that the
 * operator reconcile now (so a `pulumi up` after a cause was fixed outside the spec gets a fresh verdict).
 */
export function desiredInstance(inputs: InstanceInputs, reconcileRequest?: string, incarnation?: string): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: {
      name: inputs.name,
      namespace: inputs.namespace,
      annotations: {
        [stackAnnotation]: inputs.owner,
        [resourceAnnotation]: inputs.logicalName,
        ...(incarnation !== undefined ? { [incarnationAnnotation]: incarnation } : {}),
        ...(reconcileRequest !== undefined ? { [reconcileRequestAnnotation]: reconcileRequest } : {}),
      },
    },
    spec: desiredSpec(inputs),
  };
}

/** The object's spec: every spec key (api/spec.ts's schema) the inputs set. */
export function desiredSpec(inputs: InstanceInputs): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  for (const key of specKeys) if (inputs[key] !== undefined) spec[key] = inputs[key];
  return spec;
}

/** The Service name and endpoint of an instance: known from its name, namespace and port before it exists. */
export function derivedOutputs(inputs: Pick<InstanceInputs, "name" | "namespace" | "port">): DerivedOutputs {
  return {
    serviceName: serviceNameFor(inputs.name),
    endpoint: serviceEndpoint(inputs.name, inputs.namespace, inputs.port),
  };
}

/**
 * The outputs for `inputs` as `live` stands in `cluster`: the inputs, plus the cluster's identity, uid,
 * generation, status, Service and endpoint.
 */
export function outputsFor(
  inputs: InstanceInputs,
  live: LiveInstance,
  cluster: ClusterIdentity | undefined,
): InstanceOutputs {
  return {
    ...inputs,
    ...derivedOutputs(inputs),
    ...(cluster ? { cluster } : {}),
    uid: live.metadata.uid ?? "",
    ...incarnationOf(live),
    generation: live.metadata.generation ?? 0,
    status: live.status ?? {},
  };
}

/**
 * The inputs as the cluster has them now: the spec fields the program sets, from `live`; everything else
 * (credentials, timeout, ownership) from the previous state. A refresh stores these, so a change made with kubectl
 * shows up as drift and the next `pulumi up` puts the program's values back. A field the program leaves out is not
 * its own: what admission set (`podSecurityLevel` from the namespace's label) or another manager added stays out,
 * since the program's server-side apply would leave it in place, and a diff it cannot settle would show forever.
 */
export function inputsFromLive(previous: InstanceInputs, live: LiveInstance): InstanceInputs {
  const spec = live.spec ?? {};
  const next: Record<string, unknown> = { ...previous };
  for (const key of specKeys) {
    if (spec[key] === undefined) delete next[key];
    else if (previous[key] !== undefined) next[key] = spec[key];
  }
  next["name"] = live.metadata.name ?? previous.name;
  next["namespace"] = live.metadata.namespace ?? previous.namespace;
  return next as unknown as InstanceInputs;
}

/**
 * Why `live` may not be taken over by the resource `inputs` describe, or undefined when it may: it carries this
 * stack's and this resource's ownership marker, or it is the very object this resource created (`knownUid`).
 */
export function ownershipProblem(live: LiveInstance, inputs: InstanceInputs, knownUid?: string): string | undefined {
  if (knownUid !== undefined && live.metadata.uid === knownUid) return undefined;
  const annotations = live.metadata.annotations ?? {};
  const stack = annotations[stackAnnotation];
  const resource = annotations[resourceAnnotation];
  if (stack === inputs.owner && resource === inputs.logicalName) return undefined;
  const where = `MyAppInstance ${formatObjectKey(inputs)}`;
  const claimed =
    stack === undefined
      ? `it has no ${stackAnnotation} annotation`
      : `its ${stackAnnotation} is "${stack}" and ${resourceAnnotation} is "${resource ?? ""}", not "${inputs.owner}" and "${inputs.logicalName}"`;
  return (
    `${where} exists and is not managed by this stack (${claimed}). Choose another name, delete the object, or ` +
    `adopt it on purpose: kubectl -n ${inputs.namespace} annotate myappinstance ${inputs.name} ` +
    `${stackAnnotation}=${inputs.owner} ${resourceAnnotation}=${inputs.logicalName} --overwrite`
  );
}

/** The object's {@link incarnationAnnotation}, as an output (none on an object written before it existed). */
export function incarnationOf(live: LiveInstance): { incarnation?: string } {
  const incarnation = live.metadata.annotations?.[incarnationAnnotation];
  return incarnation !== undefined ? { incarnation } : {};
}
