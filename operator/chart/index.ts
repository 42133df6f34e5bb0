/** Helm charts as the operator's template engine: sources, values, rendering (Helm itself) and the apply/prune plan. */
export * from "./helm.ts";
export * from "./manifests.ts";
export * from "./plan.ts";
export * from "./sources.ts";
export * from "./values.ts";
