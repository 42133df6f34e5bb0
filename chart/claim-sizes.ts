/**
 * The volume sizes a StatefulSet's claim templates request, read as the apiserver reads them, and refused where
 * this platform could not count them. The apiserver takes a JSON number as a quantity too, and some quantities no
 * budget can hold: `1e1000` is a valid Go quantity whose `Value()` is 0. A size the namespace's budget or the
 * platform's `--max-storage` could not count would let a chart claim any volume, so a chart's claim sizes must be
 * quantities from 1 byte to the instance's own largest size (api/spec.ts, `maxStorage`). Pure.
 */
import { maxQuantityLength, maxStorage, maxStorageBytes, parseQuantity, type Quantity } from "../api/index.ts";
import { objectName, type RenderedObject } from "./manifests.ts";
import { list, record } from "./pod-templates.ts";
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
