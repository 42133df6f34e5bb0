/**
 * Pure builders of an instance's children (spec in, apply configurations out) and the comparison of a desired
 * object with a live one that every apply uses (compare.ts); no I/O.
 */
export * from "./compare.ts";
export * from "./deployment.ts";
export * from "./labels.ts";
export * from "./objects.ts";
export * from "./owner.ts";
export * from "./pod-template.ts";
export * from "./resources.ts";
export * from "./security-context.ts";
export * from "./service.ts";
export * from "./statefulset.ts";
export * from "./workload.ts";
// Child names are part of the API (the provider reports them too); re-exported for the operator.
export * from "../../api/child-names.ts";
