/**
 * The MyAppInstance API: one zod schema that yields the TS types, the CRD and every validation. The ground floor
 * of the repository: it imports nothing else of ours, and everything above it imports from here.
 */
export * from "./names.ts";
export { conditionSchema, conditionStatuses, maxConditionTimeLength } from "./condition-schema.ts";
export type { Condition, ConditionStatus } from "./condition-schema.ts";
export {
  Degraded,
  Progressing,
  Ready,
  Reconciling,
  Stalled,
  TransientFailure,
  conditionTypes,
  findCondition,
  hasConditionStatus,
  isReady,
  setCondition,
} from "./condition-semantics.ts";
export type { ConditionType, ConditionUpdate } from "./condition-semantics.ts";
export {
  chartConfigMapKey,
  chartRules,
  isPlainLocation,
  chartSchema,
  chartKindName,
  chartValuesSchema,
  defaultChartKinds,
  parseChartKinds,
  renderableChartKinds,
  defaultValuePaths,
  valuePathFields,
} from "./chart.ts";
export type { ChartKind, ChartSpec, ChartSpecInput, ChartValues, ValuePathField, ValuePaths } from "./chart.ts";
export { defaultChartServiceTypes, parseChartServiceTypes, serviceTypes } from "./chart-service-types.ts";
export type { ChartServiceType } from "./chart-service-types.ts";
export { buildCrd, crdSpecDigest, crdYaml, openApiV3Schema } from "./crd.ts";
export { crdRevision, crdRevisionAnnotation, crdRevisionDigest } from "./crd-revision.ts";
export { formatFieldIssues } from "./field-issue.ts";
export type { FieldIssue } from "./field-issue.ts";
export {
  imageReferencePattern,
  imageReferenceRegExp,
  isImageReference,
  maxImageReferenceLength,
} from "./image-reference.ts";
export {
  canonicalRegistryHost,
  dockerHub,
  legacyDockerHub,
  looksLikeRegistry,
  normalizedImageName,
  officialImages,
  parseRegistryEntry,
  registryAllowing,
} from "./image-registry.ts";
export { myAppInstanceSchema } from "./instance.ts";
export type { MyAppInstanceObject, MyAppInstanceInput } from "./instance.ts";
export { objectMetaSchema } from "./object-meta.ts";
export type { ObjectMeta } from "./object-meta.ts";
export {
  compareQuantities,
  formatBytes,
  isQuantity,
  maxQuantityLength,
  parseQuantity,
  parseStorageLimit,
  unsignedQuantityPattern,
  wholeBytesQuantityPattern,
} from "./quantity.ts";
export type { Quantity, QuantityFormat } from "./quantity.ts";
export {
  computeResources,
  defaultPodSecurityLevel,
  defaultPort,
  defaultReplicas,
  defaultResources,
  defaultStorageReclaimPolicy,
  maxReplicas,
  maxResourceQuantityLength,
  maxStorage,
  maxStorageBytes,
  maxStorageLength,
  myAppInstanceSpecSchema,
  podSecurityLevels,
  specRules,
  storageReclaimPolicies,
} from "./spec.ts";
export type { MyAppInstanceSpec, MyAppInstanceSpecInput, PodSecurityLevel, StorageReclaimPolicy } from "./spec.ts";
export {
  maxConditions,
  maxReconcileRequestLength,
  maxStatusMessageLength,
  maxStatusSelectorLength,
  myAppInstanceStatusSchema,
  phases,
} from "./status.ts";
export type { MyAppInstanceStatus, Phase } from "./status.ts";
export { checkSpecTransition } from "./transitions.ts";
export { specWithoutNulls, validateInstance, validateSpec, validateStatus } from "./validate.ts";
export type { InstanceVerdict, SpecVerdict, StatusVerdict } from "./validate.ts";
export * from "./child-labels.ts";
export * from "./child-names.ts";
export { namespaceBudgetLabels } from "./namespace-budget.ts";
export type { BudgetDimension } from "./namespace-budget.ts";
export { namespaceChartSourcesAnnotation } from "./namespace-chart-sources.ts";
