/**
 * What a render means for the cluster, decided without I/O: which objects to apply (only allowed kinds, only in
 * the instance's namespace, owned by the instance, within the render policy: render-rules.ts and
 * pod-security.ts; StatefulSets keeping every claim, as the built-in template's do; a workload left unsized at 1),
 * which live objects to prune, whether the render would lose volumes, and which workload is the instance's main
 * one. Pure.
 */
import {
  chartKindName,
  compareQuantities,
  defaultStorageReclaimPolicy,
  parseQuantity,
  type ChartKind,
  type StorageReclaimPolicy,
} from "../../api/index.ts";
import type { InstanceIdentity } from "../desired/index.ts";
import { isControlledBy } from "../desired/index.ts";
import {
  autoscaledWorkloads,
  clusterScopedRefusal,
  hookOf,
  objectName,
  renderPolicyRefusal,
  replicatedKinds,
  type RenderedManifest,
  type RenderPolicy,
  type RenderRefusal,
  type RenderedObject,
} from "../../chart/index.ts";
import { ownedObject } from "./owned.ts";

export type RenderPlan =
  | { readonly ok: true; readonly objects: readonly RenderedObject[] }
  | { readonly ok: false; readonly refusal: RenderRefusal };

/**
 * The objects to apply of `manifests` (a `helm template --no-hooks --skip-tests` stream, read), or why not: a kind
 * outside `allowed` or cluster-scoped, an object in another namespace, or one that breaks `policy` (the
 * instance's pod security level and the platform's Service types). Every object is owned by the instance, and
 * every StatefulSet's claim retention is the instance's ({@link claimRetention}).
 */
export function planRender(
  manifests: readonly RenderedManifest[],
  instance: InstanceIdentity,
  allowed: readonly ChartKind[],
  policy: RenderPolicy,
): RenderPlan {
  const objects: RenderedObject[] = [];
  const seen = new Set<string>();
  for (const { source, object } of manifests) {
    if (hookOf(object) !== undefined) continue;
    const clusterScoped = clusterScopedRefusal(object, source);
    if (clusterScoped) return { ok: false, refusal: clusterScoped };
    if (!allowed.some((kind) => kind.apiVersion === object.apiVersion && kind.kind === object.kind)) {
      return refuse(
        "ChartKindNotAllowed",
        `${source} renders ${objectName(object)} of kind ${chartKindName(object)}, which this operator may not ` +
          `create; allowed kinds: ${allowed.map(chartKindName).join(", ")} (MyAppOperator chartKinds)`,
      );
    }
    const namespace = object.metadata.namespace;
    if (namespace !== undefined && namespace !== instance.namespace) {
      return refuse(
        "ChartNamespaceNotAllowed",
        `${source} renders ${objectName(object)} in namespace ${namespace}; an instance's objects live in its ` +
          `own namespace ${instance.namespace}`,
      );
    }
    const id = objectId(object);
    if (seen.has(id)) return refuse("ChartRenderFailed", `${source} renders ${objectName(object)} a second time`);
    seen.add(id);
    objects.push(
      withClaimRetention(ownedObject(object, instance), policy.storageReclaimPolicy ?? defaultStorageReclaimPolicy),
    );
  }
  const refusal = renderPolicyRefusal(objects, policy);
  if (refusal) return { ok: false, refusal };
  const autoscaled = autoscaledWorkloads(objects);
  return { ok: true, objects: objects.map((object) => withReplicas(object, autoscaled)) };
}

/**
 * `object` with `spec.replicas: 1` when it is a workload the render leaves unsized and no autoscaler of the render
 * scales: the apiserver would make it 1, and budgets count it so (chart/render-usage.ts), but a field the render
 * leaves out is nobody's to keep, so a hand's `kubectl scale` to 9 stayed, counted as 1. Applied, it is the
 * instance's, and put back like any drift.
 */
function withReplicas(object: RenderedObject, autoscaled: ReadonlySet<string>): RenderedObject {
  if (!replicatedKinds.has(`${object.apiVersion}/${object.kind}`)) return object;
  if (autoscaled.has(`${object.kind}/${object.metadata.name}`)) return object;
  const spec = typeof object["spec"] === "object" && object["spec"] !== null ? object["spec"] : {};
  if ((spec as Record<string, unknown>)["replicas"] !== undefined) return object;
  return { ...object, spec: { ...spec, replicas: 1 } };
}

/**
 * The `persistentVolumeClaimRetentionPolicy` of every StatefulSet an instance renders, whatever the chart wrote:
 * `whenScaled: Retain` (a replica count is no decision about data: a chart's own Delete lost claims on a scale to 1)
 * and `whenDeleted` as `spec.storageReclaimPolicy` says. A chart's claims carry the chart's labels, which the
 * operator's admission policy does not let it write, so under Delete the StatefulSet controller's owner references
 * take them with the StatefulSet; under Retain there are none. A policy changed from Delete to Retain leaves
 * references on claims whose pod is gone (the controller takes them off only where the pod exists): the finalizer
 * releases those before the StatefulSet goes (operator/reconcile/finalize.ts).
 */
export function claimRetention(reclaimPolicy: StorageReclaimPolicy): {
  readonly whenDeleted: StorageReclaimPolicy;
  readonly whenScaled: "Retain";
} {
  return { whenDeleted: reclaimPolicy, whenScaled: "Retain" };
}

/** `object` with {@link claimRetention} when it is a StatefulSet; anything else as it is. */
function withClaimRetention(object: RenderedObject, reclaimPolicy: StorageReclaimPolicy): RenderedObject {
  if (object.apiVersion !== "apps/v1" || object.kind !== "StatefulSet") return object;
  const spec = typeof object["spec"] === "object" && object["spec"] !== null ? object["spec"] : {};
  return { ...object, spec: { ...spec, persistentVolumeClaimRetentionPolicy: claimRetention(reclaimPolicy) } };
}

/** A live object as far as pruning and volume checks need it. */
export interface LiveObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name?: string;
    readonly uid?: string;
    readonly deletionTimestamp?: string;
    readonly ownerReferences?: readonly { readonly uid?: string; readonly controller?: boolean }[];
  };
  readonly spec?: unknown;
}

/** Live objects the instance controls that the render no longer contains: delete them. */
export function pruneCandidates<T extends LiveObject>(
  live: readonly T[],
  desired: readonly RenderedObject[],
  uid: string,
): T[] {
  const wanted = new Set(desired.map(objectId));
  return live.filter(
    (object) =>
      isControlledBy(object.metadata.ownerReferences, uid) &&
      !object.metadata.deletionTimestamp &&
      !wanted.has(
        objectId({ apiVersion: object.apiVersion ?? "", kind: object.kind ?? "", metadata: object.metadata }),
      ),
  );
}

/** Who would change the volumes: a chart's render, or the built-in template after `spec.chart` was removed. */
export type VolumeChange = "chart" | "builtInTemplate";

const volumeWords: Record<VolumeChange, { readonly who: string; readonly reason: string }> = {
  chart: { who: "the chart", reason: "Chart" },
  builtInTemplate: { who: "the built-in template (spec.chart was removed)", reason: "BuiltInTemplate" },
};

/**
 * Storage rules for charts, as for the built-in template: a render may not drop a StatefulSet whose pods keep
 * volumes, drop one of its claim templates, or shrink one; nor may a switch back to the built-in template do so
 * to a StatefulSet the chart rendered (`change`: "builtInTemplate", with `desired` the template's objects).
 * Returns the refusal, or undefined when volumes are safe.
 */
export function volumeRefusal(
  liveStatefulSets: readonly LiveObject[],
  desired: readonly RenderedObject[],
  uid: string,
  change: VolumeChange = "chart",
): RenderRefusal | undefined {
  const { who, reason } = volumeWords[change];
  for (const live of liveStatefulSets) {
    if (!isControlledBy(live.metadata.ownerReferences, uid)) continue;
    const claims = claimTemplates(live.spec);
    if (claims.size === 0) continue;
    const name = live.metadata.name ?? "";
    const next = desired.find((object) => object.kind === "StatefulSet" && object.metadata.name === name);
    if (!next) {
      return {
        reason: `${reason}DropsVolumes`,
        message:
          `${who} no longer renders StatefulSet/${name}, whose pods keep volumes (${[...claims.keys()].join(", ")}); ` +
          "volumes are never dropped implicitly",
      };
    }
    const nextClaims = claimTemplates(next["spec"]);
    for (const [claim, size] of claims) {
      const nextSize = nextClaims.get(claim);
      if (nextSize === undefined) {
        return {
          reason: `${reason}DropsVolumes`,
          message: `${who} drops volume claim template ${claim} of StatefulSet/${name}; volumes are never dropped implicitly`,
        };
      }
      const storedQuantity = parseQuantity(size);
      const nextQuantity = parseQuantity(nextSize);
      if (storedQuantity && nextQuantity && compareQuantities(nextQuantity, storedQuantity) < 0) {
        return {
          reason: `${reason}ShrinksVolumes`,
          message: `${who} shrinks volume claim template ${claim} of StatefulSet/${name} from ${size} to ${nextSize}; volumes may grow but never shrink`,
        };
      }
    }
  }
  return undefined;
}

/**
 * The instance's main workload, whose image and replicas `status.image` and `readyReplicas` describe: the
 * Deployment or StatefulSet named like the instance (the release), else the first in Helm's install order.
 */
export function mainWorkload(objects: readonly RenderedObject[], instanceName: string): RenderedObject | undefined {
  const workloads = objects.filter((object) => isWorkload(object));
  return workloads.find((object) => object.metadata.name === instanceName) ?? workloads[0];
}

/**
 * Where a chart instance answers: the rendered Service named like the main workload (else the only Service), by
 * its DNS name and first port. Undefined when the chart renders no such Service.
 */
export function mainServiceEndpoint(
  objects: readonly RenderedObject[],
  instanceName: string,
  namespace: string,
): string | undefined {
  const services = objects.filter((object) => object.apiVersion === "v1" && object.kind === "Service");
  const mainName = mainWorkload(objects, instanceName)?.metadata.name;
  const service =
    services.find((object) => object.metadata.name === mainName) ?? (services.length === 1 ? services[0] : undefined);
  const port = (service?.spec as { ports?: { port?: unknown }[] } | undefined)?.ports?.[0]?.port;
  if (!service?.metadata.name || typeof port !== "number") return undefined;
  return `${service.metadata.name}.${namespace}.svc:${port}`;
}

/** Deployments and StatefulSets: what kstatus-style readiness is computed for. */
export function isWorkload(object: { readonly apiVersion?: string; readonly kind?: string }): boolean {
  return object.apiVersion === "apps/v1" && (object.kind === "Deployment" || object.kind === "StatefulSet");
}

/** `apiVersion/Kind/name`: an object's identity within one namespace. */
export function objectId(object: {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string };
}): string {
  return `${object.apiVersion}/${object.kind}/${object.metadata.name ?? ""}`;
}

/** Whether two objects are the same object of one namespace: apiVersion, kind and name. */
export function sameObject(
  a: { readonly apiVersion?: string; readonly kind?: string; readonly metadata: { readonly name?: string } },
  b: { readonly apiVersion?: string; readonly kind?: string; readonly metadata: { readonly name?: string } },
): boolean {
  return a.apiVersion === b.apiVersion && a.kind === b.kind && a.metadata.name === b.metadata.name;
}

function claimTemplates(spec: unknown): Map<string, string> {
  const templates = (spec as { volumeClaimTemplates?: unknown } | undefined)?.volumeClaimTemplates;
  const claims = new Map<string, string>();
  if (!Array.isArray(templates)) return claims;
  for (const template of templates as {
    metadata?: { name?: string };
    spec?: { resources?: { requests?: { storage?: string } } };
  }[]) {
    const name = template.metadata?.name;
    if (name) claims.set(name, template.spec?.resources?.requests?.storage ?? "");
  }
  return claims;
}

function refuse(reason: string, message: string): RenderPlan {
  return { ok: false, refusal: { reason, message } };
}
