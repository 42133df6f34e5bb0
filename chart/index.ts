/**
 * The chart engine, shared by the operator (which applies renders) and the provider (which previews them): chart
 * sources, values from the typed spec, rendering with Helm itself (a bounded guest process), the cluster's
 * capabilities kept for reuse, and parsing its output. Uses api only.
 */
export * from "./capabilities.ts";
export * from "./claim-sizes.ts";
export * from "./fair-slots.ts";
export * from "./helm.ts";
export * from "./manifests.ts";
export * from "./pod-security.ts";
export { podTemplateOf, type PodTemplate } from "./pod-templates.ts";
export * from "./render-platform-limits.ts";
export * from "./render-reads.ts";
export * from "./render-usage.ts";
export * from "./render-rules.ts";
export * from "./render-limits.ts";
export * from "./source-policy.ts";
export * from "./namespace-sources.ts";
export * from "./sources.ts";
export * from "./values.ts";
export * from "./values-size.ts";
