/** Charts in the operator: what a render means for the cluster (ownership, policy, prune, volumes), on top of chart/. */
export * from "../../chart/index.ts";
export * from "./owned.ts";
export * from "./plan.ts";
export * from "./switch.ts";
export * from "./pod-security.ts";
export { podTemplateOf, type PodTemplate } from "./pod-templates.ts";
export * from "./render-rules.ts";
