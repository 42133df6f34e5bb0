/** The MyAppInstance dynamic provider: the resource class for stacks, and its pure check/diff for tests and tools. */
export { MyAppInstance } from "./resource.ts";
export type { InstancePlatform, MyAppInstanceArgs } from "./resource.ts";
export { checkInputs } from "./check.ts";
export type { CheckOutcome, InputFailure } from "./check.ts";
export { diffInputs, ForbiddenChangeError } from "./diff.ts";
export type { DiffOutcome } from "./diff.ts";
export { autoName } from "./auto-name.ts";
export {
  fieldManager,
  resourceAnnotation,
  stackAnnotation,
  defaultNamespace,
  defaultTimeoutSeconds,
  unknownValue,
} from "./inputs.ts";
export type { InstanceInputs, InstanceOutputs } from "./inputs.ts";
export { ResourceInitError } from "./init-error.ts";
