/**
 * What the caches a tenant fills may take of the operator's heap. Renders are kept for reuse (chart/helm.ts) and
 * the objects of the current renders kept whole by the informers (chart/rendered-children.ts); a chart may render
 * up to the output limit each time, so together they could hold any heap. Each is given a share of the heap the
 * process was started with (the component sizes it from the container's memory limit): a quarter for renders, at
 * most their default of 128 MiB; an eighth for what renders set that the cache keeps whole, which it keeps at up
 * to twice that (the server's defaults and status). Half the heap at most, the rest for reconciles and watches.
 *
 * And what a namespace's labelled objects that no owner keeps may cost the cache: anyone who may create an object
 * may give it the operator's label, and the cache keeps each as its identity (0.8–1.5 KiB of heap, by the length of
 * its names: 50,000 measured). A sixty-fourth of the heap per kind and namespace, at 2 KiB each: a namespace that
 * floods every cached kind (nine at most) holds at most a seventh of the heap; past it the namespace is read live
 * (operator/runtime/informer.ts, NamespaceLimit).
 */
import { defaultRenderCacheBytes } from "../chart/index.ts";
import { keptBudget, type KeptBudget } from "./chart/index.ts";

export interface HeapBudgets {
  /** Bytes of renders kept for reuse. */
  readonly renderCacheBytes: number;
  /** What the renders whose objects the cache keeps whole may set, in all and per namespace. */
  readonly keptChildren: KeptBudget;
  /** Objects of one kind the cache keeps in part (identities, claims) per namespace. */
  readonly partialObjectsPerNamespace: number;
}

/** What the cache is taken to spend on an object it keeps in part: above the most measured, with its index. */
export const partialObjectBytes = 2048;

/** The budgets for a heap of `heapBytes` (V8's `heap_size_limit`) and renders of at most `renderOutputBytes`. */
export function heapBudgets(heapBytes: number, renderOutputBytes: number): HeapBudgets {
  return {
    renderCacheBytes: Math.min(defaultRenderCacheBytes, Math.floor(heapBytes / 4)),
    keptChildren: keptBudget(Math.floor(heapBytes / 8), renderOutputBytes),
    partialObjectsPerNamespace: Math.floor(heapBytes / 64 / partialObjectBytes),
  };
}
