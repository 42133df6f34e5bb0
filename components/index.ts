/** The MyAppOperator Pulumi component, the pure builders behind it, and the operator's RBAC definition. */
export * from "./my-app-operator.ts";
export * from "./settings.ts";
export * from "./rbac.ts";
export * from "./roles.ts";
export * from "./metadata.ts";
export * from "./namespace.ts";
export * from "./service-account.ts";
export * from "./deployment.ts";
export * from "./metrics-service.ts";
export * from "./pod-disruption-budget.ts";
export * from "./operator-endpoints.ts";
export * from "./operator-flags.ts";
export * from "./crd.ts";
export * from "./install-manifests.ts";
export * from "./service-account-kubeconfig.ts";
export type * from "./manifest-types.ts";
export * from "./cluster-connection.ts";
export * from "./cluster-provider.ts";
