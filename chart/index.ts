/**
 * The chart engine, shared by the operator (which applies renders) and the provider (which previews them): chart
 * sources, values from the typed spec, rendering with Helm itself, and parsing its output. Uses api only.
 */
export * from "./helm.ts";
export * from "./manifests.ts";
export * from "./sources.ts";
export * from "./values.ts";
