/**
 * What the operator keeps of a MyAppInstance in its cache: what reconciles and the webhook's budget counts read,
 * and nothing else a tenant could make large. Instances are the one kind every tenant writes freely and the
 * operator must keep whole: its spec is bounded field by field by the CRD, except `spec.values`, which etcd takes
 * up to ~1.5 MiB, and the metadata may carry ~1.5 MiB of labels and 256 KiB of annotations. Kept as written, a few
 * hundred such instances fill the heap of the process every namespace shares.
 *
 * - metadata: identity, generation, deletion, finalizers up to {@link maxKeptFinalizersLength} of JSON (a list
 *   etcd takes up to ~1.5 MiB: a longer one is kept as `finalizersWithheld` with only the operator's own, if there,
 *   and the reconcile reads the instance live before it changes them), and the one annotation reconciles read (a reconcile
 *   request, only as long as one that is answered: 256 characters; a longer one is never answered, and 400
 *   instances' 255 KiB requests held 100 MiB); no labels (the operator selects instances by none and copies none
 *   to children), no other annotation;
 * - `spec.values` within the limit are kept as their JSON text, parsed again on each read (a chart instance's
 *   reconcile reads them once): parsed, 128 KiB of `[[],[],...]` took 1.66 MiB of heap, so a few hundred
 *   instances of one tenant would have filled the heap; as text they take what they weigh;
 * - `spec.values` over `--render-values` is not kept: the instance is cached without it and with
 *   `valuesWithheld`, which its reconcile reports (Degraded, ValuesTooLarge) without rendering or changing anything.
 *   The webhook refuses such values at the door; this is for instances stored while the webhooks were off or the
 *   limit was higher.
 */
import { finalizer, maxReconcileRequestLength, reconcileRequestAnnotation } from "../api/index.ts";
import { valuesBytes } from "../chart/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { InstanceObject } from "./reconcile/index.ts";

/** The longest finalizer list kept as it is, in characters of JSON: a few dozen finalizers of any real use. */
export const maxKeptFinalizersLength = 4096;

/** The informer transform of instances, for a platform whose `--render-values` is `maxValuesKiB`. */
export function instanceAsRead(maxValuesKiB: number): (object: KubeObject) => InstanceObject {
  const maxBytes = maxValuesKiB * 1024;
  return (object) => {
    const instance = object as InstanceObject;
    const {
      name,
      namespace,
      uid,
      resourceVersion,
      generation,
      creationTimestamp,
      deletionTimestamp,
      finalizers,
      annotations,
    } = instance.metadata;
    const withheld = finalizers !== undefined && JSON.stringify(finalizers).length > maxKeptFinalizersLength;
    const annotated = annotations?.[reconcileRequestAnnotation];
    const requested = annotated !== undefined && annotated.length <= maxReconcileRequestLength ? annotated : undefined;
    const metadata = {
      ...(name === undefined ? {} : { name }),
      ...(namespace === undefined ? {} : { namespace }),
      ...(uid === undefined ? {} : { uid }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      ...(generation === undefined ? {} : { generation }),
      ...(creationTimestamp === undefined ? {} : { creationTimestamp }),
      ...(deletionTimestamp === undefined ? {} : { deletionTimestamp }),
      ...(finalizers === undefined
        ? {}
        : { finalizers: withheld ? finalizers.filter((f) => f === finalizer) : finalizers }),
      ...(requested === undefined ? {} : { annotations: { [reconcileRequestAnnotation]: requested } }),
    };
    const kept = {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata,
      ...(withheld ? { finalizersWithheld: { count: finalizers.length } } : {}),
    };
    const spec = instance.spec as { values?: unknown } | undefined;
    const bytes = typeof spec === "object" && spec !== null ? valuesBytes(spec.values) : 0;
    if (bytes <= maxBytes) {
      return {
        ...kept,
        ...(instance.spec === undefined ? {} : { spec: withValuesAsText(instance.spec) }),
        ...(instance.status === undefined ? {} : { status: instance.status }),
      };
    }
    const { values, ...withoutValues } = spec as { values?: unknown };
    return {
      ...kept,
      spec: withoutValues,
      ...(instance.status === undefined ? {} : { status: instance.status }),
      valuesWithheld: { bytes, limitKiB: maxValuesKiB },
    };
  };
}

/**
 * `spec` whose `values` are held as JSON text and parsed on each read of the field (an enumerable getter, so
 * spreads, clones, comparisons and JSON see the values as before); each read returns values of its own. Values
 * nested past JSON.stringify's stack are kept as they are.
 */
function withValuesAsText(spec: unknown): unknown {
  if (spec === null || typeof spec !== "object" || !("values" in spec) || spec.values === undefined) return spec;
  let text: string;
  try {
    text = JSON.stringify(spec.values);
  } catch {
    return spec;
  }
  const { values: _values, ...rest } = spec as Record<string, unknown>;
  return Object.defineProperty(rest, "values", { get: () => JSON.parse(text) as unknown, enumerable: true });
}
