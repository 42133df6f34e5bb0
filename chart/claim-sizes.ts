/**
 * The volumes a render may claim: only through a StatefulSet's claim templates, each a new volume of a size this
 * platform can count. Sizes are read as the apiserver reads them, and refused where this platform could not count
 * them. The apiserver takes a JSON number as a quantity too, and some quantities no budget can hold: `1e1000` is a
 * valid Go quantity whose `Value()` is 0. A size the namespace's budget or the platform's `--max-storage` could not
 * count would let a chart claim any volume, so a chart's claim sizes must be quantities from 1 byte to the
 * instance's own largest size (api/spec.ts, `maxStorage`). Storage anywhere else is refused: an ephemeral volume's
 * claim, and a claim template that would bind a PersistentVolume that exists rather than get a new one. Pure.
 */
import { maxQuantityLength, maxStorage, maxStorageBytes, parseQuantity, type Quantity } from "../api/index.ts";
import { objectName, type RenderedObject } from "./manifests.ts";
import { list, podTemplateOf, record } from "./pod-templates.ts";
import type { RenderRefusal } from "./render-rules.ts";

/** One claim template's storage request. */
export interface ClaimRequest {
  /** Field path in the StatefulSet, for messages. */
  readonly path: string;
  /** What the chart wrote (a string or a number), or undefined (or null, an empty template value) for none. */
  readonly written: unknown;
  /** Its size; undefined when none was written or it is not a quantity within bounds. */
  readonly size: Quantity | undefined;
}

/** 1 byte and {@link maxStorage}, in nano-bytes (api/quantity.ts). */
const smallest = 10n ** 9n;
const largest = maxStorageBytes * 10n ** 9n;

/** The storage each claim template of a StatefulSet requests (none for another kind). */
export function claimRequests(object: RenderedObject): ClaimRequest[] {
  if (`${object.apiVersion}/${object.kind}` !== "apps/v1/StatefulSet") return [];
  return list(record(object["spec"])["volumeClaimTemplates"]).map((claim, index) => {
    const written = record(record(record(record(claim)["spec"])["resources"])["requests"])["storage"];
    return {
      path: `spec.volumeClaimTemplates[${index}].spec.resources.requests.storage`,
      written,
      size: sizeOf(written),
    };
  });
}

function sizeOf(written: unknown): Quantity | undefined {
  const text = typeof written === "number" && Number.isFinite(written) ? String(written) : written;
  if (typeof text !== "string" || text.length > maxQuantityLength) return undefined;
  const size = parseQuantity(text);
  return size && size.nanos >= smallest && size.nanos <= largest ? size : undefined;
}

/**
 * The first claim size this platform cannot count (reason `ChartClaimSizeNotAllowed`), or undefined. A claim that
 * requests no storage is left to the apiserver, which refuses it.
 */
export function claimSizeRefusal(objects: readonly RenderedObject[]): RenderRefusal | undefined {
  for (const object of objects) {
    const request = claimRequests(object).find(
      ({ written, size }) => written !== undefined && written !== null && !size,
    );
    if (!request) continue;
    const shown = JSON.stringify(request.written) ?? String(request.written);
    return {
      reason: "ChartClaimSizeNotAllowed",
      message:
        `${objectName(object)} ${request.path} is ${shown.length <= 66 ? shown : `${shown.slice(0, 64)}…`}; a ` +
        `chart's volume sizes must be quantities from 1 byte to ${maxStorage}, such as 10Gi or 500M`,
    };
  }
  return undefined;
}

/**
 * No ephemeral volume in any pod (reason `ChartEphemeralVolumeNotAllowed`): its claim is made by the ephemeral
 * volume controller from the pod's template, at whatever size and class it names, for every pod. Refused rather
 * than counted: counting would need its own replicas × size sums for every kind that makes pods (a Job's
 * parallelism, a CronJob's overlapping runs, a DaemonSet's node count, which no render knows), while a StatefulSet's
 * claim templates already give a chart sized, budgeted volumes (render-usage.ts, `--max-storage`). Restricted pod
 * security lists `ephemeral` among its volume types (pod-security.ts, as upstream): this rule is about storage.
 */
export function ephemeralVolumeRefusal(objects: readonly RenderedObject[]): RenderRefusal | undefined {
  for (const object of objects) {
    const template = podTemplateOf(object);
    if (!template) continue;
    const index = list(template.spec["volumes"]).findIndex((volume) => {
      const ephemeral = record(volume)["ephemeral"];
      return ephemeral !== undefined && ephemeral !== null;
    });
    if (index < 0) continue;
    return {
      reason: "ChartEphemeralVolumeNotAllowed",
      message:
        `${objectName(object)} ${template.specPath}.volumes[${index}].ephemeral is set; a chart's storage comes only ` +
        "from a StatefulSet's volumeClaimTemplates, whose sizes count against --max-storage and the namespace's " +
        "budget (an ephemeral volume's claim counts against neither): use a claim template, or emptyDir for scratch",
    };
  }
  return undefined;
}

/**
 * Claim templates get new volumes from a StorageClass (reason `ChartClaimBindingNotAllowed`), never one that exists:
 * no `spec.volumeName` (bind that PersistentVolume, if Available: another tenant's released data, a volume
 * provisioned for someone else), no `spec.selector` (only pre-provisioned volumes match one; a class never
 * provisions for it), no `storageClassName: ""` (no class: only pre-provisioned volumes), and no
 * `spec.dataSourceRef.namespace` (a copy of another namespace's volume). Empty values (null, `volumeName: ""`) are
 * allowed. The class a claim names is checked by no rule here: whether it exists and may expand
 * (`--require-expandable-storage`) needs the cluster (operator/admission/validate.ts reads it for
 * `spec.storageClassName`).
 */
export function claimBindingRefusal(objects: readonly RenderedObject[]): RenderRefusal | undefined {
  for (const object of objects) {
    if (`${object.apiVersion}/${object.kind}` !== "apps/v1/StatefulSet") continue;
    for (const [index, claim] of list(record(object["spec"])["volumeClaimTemplates"]).entries()) {
      const found = bindingField(record(record(claim)["spec"]));
      if (!found) continue;
      const [field, value] = found;
      const shown = JSON.stringify(value) ?? String(value);
      return {
        reason: "ChartClaimBindingNotAllowed",
        message:
          `${objectName(object)} spec.volumeClaimTemplates[${index}].spec.${field} is ` +
          `${shown.length <= 66 ? shown : `${shown.slice(0, 64)}…`}; a chart's claims get new volumes from a ` +
          "StorageClass, never a PersistentVolume that exists: leave volumeName, selector and dataSourceRef.namespace " +
          "out, and storageClassName out or naming a class",
      };
    }
  }
  return undefined;
}

/** The first field of a claim spec that asks for a volume that exists, and its value. */
function bindingField(spec: Readonly<Record<string, unknown>>): [field: string, value: unknown] | undefined {
  const set = (value: unknown) => value !== undefined && value !== null && value !== "";
  if (set(spec["volumeName"])) return ["volumeName", spec["volumeName"]];
  // `selector: {}` too: it matches every PersistentVolume, and CSI provisioners provision for no selector at all.
  if (spec["selector"] !== undefined && spec["selector"] !== null) return ["selector", spec["selector"]];
  if (spec["storageClassName"] === "") return ["storageClassName", ""];
  const namespace = record(spec["dataSourceRef"])["namespace"];
  if (set(namespace)) return ["dataSourceRef.namespace", namespace];
  return undefined;
}
