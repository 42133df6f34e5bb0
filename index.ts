/**
 * The `myapp-platform` package: what a Pulumi program imports after `npm install ./myapp-platform-<version>.tgz`
 * (the tarball `npm pack` makes; the package is not on a registry).
 *
 *   import { MyAppOperator, MyAppInstance } from "myapp-platform";
 *
 * The MyAppOperator component installs the platform into a cluster; MyAppInstance resources declare instances on
 * it. The API's types and zod schemas come along, so a program can validate or build instances itself.
 */
export * from "./api/index.ts";
export { MyAppOperator, myAppOperatorType } from "./components/my-app-operator.ts";
export type { MyAppOperatorOptions, MyAppOperatorResources } from "./components/my-app-operator.ts";
export type { LogLevel, MyAppOperatorArgs, OperatorPlacement, OperatorSettings } from "./components/settings.ts";
export type { ClusterConnection } from "./components/cluster-connection.ts";
export { ClusterProvider } from "./components/cluster-provider.ts";
export { keptClaimsGuard } from "./components/kept-claims-guard.ts";
export type { ClusterProviderConnection } from "./components/cluster-provider.ts";
export { MyAppInstance } from "./provider/resource.ts";
export type { InstancePlatform, MyAppInstanceArgs } from "./provider/resource.ts";
export type { ClusterIdentity } from "./kube/cluster-identity.ts";
export type { InstanceOutputs as MyAppInstanceOutputs } from "./provider/inputs.ts";
