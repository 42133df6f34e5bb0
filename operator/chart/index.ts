/** Charts in the operator: what a render means for the cluster (ownership, policy, prune, volumes), on top of chart/. */
export * from "../../chart/index.ts";
export * from "./owned.ts";
export * from "./plan.ts";
export * from "./switch.ts";
