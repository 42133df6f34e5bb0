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
 *   limit was higher;
 * - `status`: written through its own subresource, which the platform grants tenants no right to, but an
 *   administrator may (a broad role), and another controller or tool may add conditions of its own. The CRD bounds
 *   it (16 conditions, messages of 32,768 characters: still ~1 MiB an instance in two-byte characters), and the
 *   cache keeps of it only what the operator reads: the conditions of its own types ({@link keptConditionTypes}),
 *   and messages (of those and `status.message`) up to {@link maxKeptMessageLength}, every message the operator
 *   writes; a longer one is cut, with a note. A foreign condition of the operator's types that was cut, or left
 *   out, differs from what the operator computes, so its next status write puts its own view back (once: what it
 *   writes is kept as it is); conditions of other types are left to their writer. The other fields are the
 *   operator's, each bounded by the CRD to a few KiB at most (image, selector, endpoint, the request answered,
 *   chartUsage), and kept.
 */
import {
  conditionTypes,
  finalizer,
  maxConditionTimeLength,
  maxReconcileRequestLength,
  reconcileRequestAnnotation,
} from "../api/index.ts";
import { valuesBytes } from "../chart/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { InstanceObject } from "./reconcile/index.ts";

/** The longest finalizer list kept as it is, in characters of JSON: a few dozen finalizers of any real use. */
export const maxKeptFinalizersLength = 4096;

/**
 * The longest status message kept as it is, in characters (code points): the longest the operator writes
 * (`statusMessageLength`, operator/reconcile/status-limits.ts), so a longer one is someone else's.
 */
export const maxKeptMessageLength = 4096;

/** The condition types the cache keeps: the operator's own, the only ones it writes or reads. */
export const keptConditionTypes: ReadonlySet<string> = new Set<string>(Object.values(conditionTypes));

/** What ends a message the cache cut; it fits within {@link maxKeptMessageLength}, so a cut message is not cut again. */
export const cutMessageNote = " … (cut: longer than any message the operator writes)";

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
    const status = statusAsRead(instance.status);
    if (bytes <= maxBytes) {
      return {
        ...kept,
        ...(instance.spec === undefined ? {} : { spec: withValuesAsText(instance.spec) }),
        ...(status === undefined ? {} : { status }),
      };
    }
    const { values, ...withoutValues } = spec as { values?: unknown };
    return {
      ...kept,
      spec: withoutValues,
      ...(status === undefined ? {} : { status }),
      valuesWithheld: { bytes, limitKiB: maxValuesKiB },
    };
  };
}

/**
 * What the cache keeps of `status`: the conditions of {@link keptConditionTypes}, messages cut to
 * {@link maxKeptMessageLength}, the other fields as they are. A status that is not an object (which the CRD never
 * stores) is not kept: the operator writes its own.
 */
function statusAsRead(status: unknown): Record<string, unknown> | undefined {
  if (status === null || typeof status !== "object" || Array.isArray(status)) return undefined;
  const { conditions, message, ...rest } = status as Record<string, unknown>;
  return {
    ...rest,
    ...(conditions === undefined ? {} : { conditions: conditionsAsRead(conditions) }),
    ...(message === undefined ? {} : { message: keptMessage(message) }),
  };
}

/**
 * The conditions of the operator's types, in their order, with their messages cut. One whose time is longer than
 * the schema allows (stored before it said so) is left out: none the operator wrote, and it writes its own.
 */
function conditionsAsRead(conditions: unknown): unknown[] {
  if (!Array.isArray(conditions)) return [];
  const kept: unknown[] = [];
  for (const condition of conditions as unknown[]) {
    if (condition === null || typeof condition !== "object") continue;
    const { type, lastTransitionTime, message } = condition as Record<string, unknown>;
    if (typeof type !== "string" || !keptConditionTypes.has(type)) continue;
    if (typeof lastTransitionTime === "string" && codePointsOver(lastTransitionTime, maxConditionTimeLength)) continue;
    const cut = keptMessage(message);
    kept.push(cut === message ? condition : { ...condition, message: cut });
  }
  return kept;
}

/**
 * `message`, or when it has more than {@link maxKeptMessageLength} characters (code points, as the schema counts
 * them), its start and {@link cutMessageNote} in as many. A copy: a slice of the message would keep all of it.
 */
function keptMessage(message: unknown): unknown {
  if (typeof message !== "string" || !codePointsOver(message, maxKeptMessageLength)) return message;
  const headLength = maxKeptMessageLength - cutMessageNote.length;
  let characters = 0;
  let headUnits = 0;
  for (const character of message) {
    if (++characters > headLength) break;
    headUnits += character.length;
  }
  // split/join builds a new string; a slice, and a concatenation with one, would refer to the whole message.
  return message.slice(0, headUnits).split("").join("") + cutMessageNote;
}

/** True when `text` has more than `max` code points; it looks at `max + 1` of them at most. */
function codePointsOver(text: string, max: number): boolean {
  // A string's length in UTF-16 units is never less than its code points.
  if (text.length <= max) return false;
  let units = 0;
  for (let characters = 0; units < text.length; characters++) {
    if (characters === max) return true;
    units += (text.codePointAt(units) ?? 0) > 0xffff ? 2 : 1;
  }
  return false;
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
