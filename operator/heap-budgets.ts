/**
 * What the caches a tenant fills may take of the operator's heap. Renders are kept for reuse (chart/helm.ts) and
 * the objects of the current renders kept whole by the informers (chart/rendered-children.ts); a chart may render
 * up to the output limit each time, so together they could hold any heap. Each is given a share of the heap the
 * process was started with (the component sizes it from the container's memory limit): a quarter for renders, at
 * most their default of 128 MiB; an eighth for what renders set that the cache keeps whole, which it keeps at up
 * to twice that (the server's defaults and status). Half the heap at most, the rest for reconciles and watches.
 */
import { defaultRenderCacheBytes } from "../chart/index.ts";
import { keptBudget, type KeptBudget } from "./chart/index.ts";

export interface HeapBudgets {
  /** Bytes of renders kept for reuse. */
  readonly renderCacheBytes: number;
  /** What the renders whose objects the cache keeps whole may set, in all and per namespace. */
  readonly keptChildren: KeptBudget;
}

/** The budgets for a heap of `heapBytes` (V8's `heap_size_limit`) and renders of at most `renderOutputBytes`. */
export function heapBudgets(heapBytes: number, renderOutputBytes: number): HeapBudgets {
  return {
    renderCacheBytes: Math.min(defaultRenderCacheBytes, Math.floor(heapBytes / 4)),
    keptChildren: keptBudget(Math.floor(heapBytes / 8), renderOutputBytes),
  };
}
