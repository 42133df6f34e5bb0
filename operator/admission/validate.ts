/**
 * The validating webhook's verdict on one instance, as pure functions of the instance, its stored version (on an
 * UPDATE), what the cluster says (facts, gathered by review.ts through lookups.ts) and the platform policy. Every
 * violation names its field, the rule with its flag or label, the limit and what is allowed.
 *
 * Two principles keep the policy from wedging what already runs:
 * - an UPDATE is judged only on what it changes: an image, chart, class or ConfigMap it leaves as it was is not
 *   judged again (the class may have been deleted, the registry dropped from the list since);
 * - a limit refuses only growth: replicas at or below the stored number, or storage the same, pass a maximum or a
 *   budget that was lowered after the instance was made, so it can still shrink, change other fields or go.
 *
 * Budgets are counted from the operator's cache (a refusal from storage: review.ts), without the instance itself;
 * instances being deleted count, and for storage the volume claims kept past their instances too (kept-claims.ts).
 * One replica judges a namespace's writes one at a time (review.ts); two replicas judging at once can each see the
 * room the other takes (a ResourceQuota on `count/myappinstances.example.com` is the hard cap for the number of
 * instances).
 */
import {
  chartConfigMapKey,
  formatBytes,
  parseQuantity,
  type BudgetDimension,
  type MyAppInstanceObject,
  type MyAppInstanceSpec,
} from "../../api/index.ts";
import { namespacePolicy, sameChartSource, sourceRefusal } from "../../chart/namespace-sources.ts";
import { allowedBy, sourcePolicy } from "../../chart/source-policy.ts";
import { describeSource } from "../../chart/sources.ts";
import { valuesBytes, valuesTooLargeMessage } from "../../chart/values-size.ts";
import { keptClaimStorage, type ClaimFacts } from "./kept-claims.ts";
import { budgetOverruns, budgetSource, grows, instanceUsage, specUsage, type Overrun } from "./namespace-budget.ts";
import {
  normalizedImageName,
  parseStorageLimit,
  policyFlags,
  registryAllowing,
  type PlatformPolicy,
} from "./policy.ts";

/** One rule an instance breaks. */
export interface Violation {
  /** The field to change, as the apiserver names it: `spec.replicas`. */
  readonly field: string;
  readonly rule: ViolationRule;
  /** The whole sentence, starting with the field: `spec.replicas: 12 is more than ...`. */
  readonly message: string;
}

/** The rules, named after the policy setting (or the fact) that decides them. */
export type ViolationRule =
  | "allowedRegistries"
  | "maxReplicas"
  | "maxStorage"
  | "chartSources"
  | "namespaceMaxInstances"
  | "namespaceMaxReplicas"
  | "namespaceMaxStorage"
  | "namespaceBudgetLabel"
  | "storageClassExists"
  | "requireExpandableStorage"
  | "chartConfigMap"
  | "maxValuesSize"
  /** The spec does not pass the API's schema (an operator older or newer than the CRD). */
  | "schema";

/**
 * Rules about the object itself rather than what the platform allows: a StorageClass or ConfigMap it names that is
 * not there (yet), or a spec the operator cannot read. Alone, they make the answer 422 Invalid; any other rule
 * makes it 403 Forbidden.
 */
export const invalidRules: ReadonlySet<ViolationRule> = new Set(["storageClassExists", "chartConfigMap", "schema"]);

/** The instance under review: its name, namespace and spec (defaults applied). */
export interface AdmittedInstance {
  readonly name: string;
  readonly namespace: string;
  readonly spec: MyAppInstanceSpec;
}

/** A Namespace, as far as admission reads it. */
export interface NamespaceFacts {
  readonly labels: Readonly<Record<string, string>>;
  /** Its chart-sources annotation (api/namespace-chart-sources.ts), undefined when it has none. */
  readonly chartSources?: string | undefined;
}

/** A StorageClass, as far as admission reads it. */
export interface StorageClassFacts {
  readonly name: string;
  readonly allowVolumeExpansion?: boolean;
}

/**
 * A chart ConfigMap: the keys of its binaryData (where `kubectl create configmap --from-file` puts a .tgz) the
 * verdict reads, that is `chart.tgz` or none.
 */
export interface ConfigMapFacts {
  readonly keys: readonly string[];
}

/**
 * What the cluster says, for the lookups {@link factsNeeded} asked for; what was not asked for is read as absent
 * and not judged. `undefined` means "does not exist".
 */
export interface AdmissionFacts {
  readonly namespace?: NamespaceFacts | undefined;
  /** The namespace's instances (this one is skipped here; those being deleted count). */
  readonly instances?: readonly MyAppInstanceObject[];
  /** The volume claims the operator's StatefulSets made in the namespace: read when storage grows (kept-claims.ts). */
  readonly claims?: readonly ClaimFacts[];
  /** The class `spec.storageClassName` names. */
  readonly storageClass?: StorageClassFacts | undefined;
  /** The cluster's default class, when the instance's volumes would get it. */
  readonly defaultStorageClass?: StorageClassFacts | undefined;
  /** The ConfigMap `spec.chart.configMap` names. */
  readonly chartConfigMap?: ConfigMapFacts | undefined;
}

/** Which lookups the verdict on this change needs; review.ts makes exactly these. */
export interface FactsNeeded {
  /**
   * The Namespace: its budget labels, when a budget could refuse this change, and its chart-sources annotation,
   * when the change names a new remote chart source.
   */
  readonly namespace: boolean;
  /** The namespace's instances: read only once a budget applies (flags or labels). */
  readonly instances: boolean;
  /** The namespace's volume claims: when storage grows, read once a budget applies (as the instances). */
  readonly claims: boolean;
  readonly storageClass: string | undefined;
  readonly defaultStorageClass: boolean;
  readonly chartConfigMap: string | undefined;
}

/** The lookups a verdict on `instance` (an UPDATE of `old`, or a CREATE) under `policy` needs. */
export function factsNeeded(
  instance: AdmittedInstance,
  old: AdmittedInstance | undefined,
  policy: PlatformPolicy,
): FactsNeeded {
  const { spec } = instance;
  const growing = grows(specUsage(spec), old === undefined ? undefined : specUsage(old.spec));
  return {
    namespace: growing || namesNewRemoteSource(spec, old, policy),
    // Refined by review.ts with hasBudget once the namespace is read: no budget, no count.
    instances: growing,
    claims: specUsage(spec).storage > (old === undefined ? 0n : specUsage(old.spec).storage),
    storageClass: checksStorageClass(spec, old) ? spec.storageClassName : undefined,
    defaultStorageClass: checksDefaultStorageClass(spec, old, policy),
    chartConfigMap: checksChartConfigMap(spec, old) ? spec.chart?.configMap : undefined,
  };
}

/** Every rule `instance` breaks, in the order of its fields; empty when it may be admitted. */
export function validateInstance(
  instance: AdmittedInstance,
  old: AdmittedInstance | undefined,
  facts: AdmissionFacts,
  policy: PlatformPolicy,
): Violation[] {
  return [
    ...imageViolations(instance, old, policy),
    ...replicaViolations(instance, old, policy),
    ...storageViolations(instance, old, facts, policy),
    ...chartViolations(instance, old, facts, policy),
    ...valuesViolations(instance, old, policy),
    ...budgetViolations(instance, old, facts, policy),
  ];
}

/** `spec.values` over `--render-values`: refused unless the UPDATE shrinks them (or leaves them as they were). */
function valuesViolations(instance: AdmittedInstance, old: AdmittedInstance | undefined, policy: PlatformPolicy) {
  return oversizedValues(instance.spec.values, old === undefined ? undefined : { values: old.spec.values }, policy);
}

/**
 * {@link valuesViolations} on values as the request carries them, before the schema reads them: the review
 * judges the size first, so the largest requests cost one `JSON.stringify`, not a walk of every key.
 */
export function oversizedValues(
  values: unknown,
  old: { readonly values: unknown } | undefined,
  policy: PlatformPolicy,
): Violation[] {
  const max = policy.maxValuesKiB;
  if (max === undefined) return [];
  const bytes = valuesBytes(values);
  if (bytes <= max * 1024 || (old !== undefined && bytes <= valuesBytes(old.values))) return [];
  return [violation("spec.values", "maxValuesSize", valuesTooLargeMessage(bytes, max))];
}

function imageViolations(instance: AdmittedInstance, old: AdmittedInstance | undefined, policy: PlatformPolicy) {
  const { image } = instance.spec;
  const allowed = policy.allowedRegistries;
  if (allowed.length === 0 || old?.spec.image === image || registryAllowing(allowed, image)) return [];
  const name = normalizedImageName(image);
  return [
    violation(
      "spec.image",
      "allowedRegistries",
      `${image} (${name}) is not from a registry the platform allows (only ${allowed.join(", ")}, ` +
        `${policyFlags.allowedRegistries}); use an image from one of them`,
    ),
  ];
}

function replicaViolations(instance: AdmittedInstance, old: AdmittedInstance | undefined, policy: PlatformPolicy) {
  const { replicas } = instance.spec;
  const max = policy.maxReplicas;
  if (max === undefined || replicas <= max || (old !== undefined && replicas <= old.spec.replicas)) return [];
  return [
    violation(
      "spec.replicas",
      "maxReplicas",
      `${replicas} is more than the platform allows per instance (at most ${max}, ${policyFlags.maxReplicas})`,
    ),
  ];
}

function storageViolations(
  instance: AdmittedInstance,
  old: AdmittedInstance | undefined,
  facts: AdmissionFacts,
  policy: PlatformPolicy,
): Violation[] {
  const { spec } = instance;
  const found: Violation[] = [];
  const max = policy.maxStorage === undefined ? undefined : parseStorageLimit(policy.maxStorage, 1);
  const size = spec.storage === undefined ? undefined : parseQuantity(spec.storage);
  if (max && size && size.nanos > max.nanos && spec.storage !== old?.spec.storage) {
    found.push(
      violation(
        "spec.storage",
        "maxStorage",
        `${spec.storage} is more than the platform allows per volume (at most ${policy.maxStorage}, ` +
          `${policyFlags.maxStorage})`,
      ),
    );
  }
  if (checksStorageClass(spec, old)) {
    const name = spec.storageClassName ?? "";
    const storageClass = facts.storageClass;
    if (!storageClass) {
      found.push(
        violation(
          "spec.storageClassName",
          "storageClassExists",
          `StorageClass "${name}" does not exist in the cluster; name one that does (kubectl get storageclass), ` +
            "or leave storageClassName out for the cluster's default class",
        ),
      );
    } else if (policy.requireExpandableStorage && storageClass.allowVolumeExpansion !== true) {
      found.push(notExpandable(`StorageClass "${name}"`));
    }
  } else if (checksDefaultStorageClass(spec, old, policy)) {
    const fallback = facts.defaultStorageClass;
    // No default class: the claim waits for one, which the operator reports; nothing to judge here.
    if (fallback && fallback.allowVolumeExpansion !== true) {
      found.push(notExpandable(`the cluster's default StorageClass "${fallback.name}"`));
    }
  }
  return found;
}

function notExpandable(what: string): Violation {
  return violation(
    "spec.storageClassName",
    "requireExpandableStorage",
    `${what} does not allow volume expansion, and the platform requires classes that do ` +
      `(${policyFlags.requireExpandableStorage}); name a class with allowVolumeExpansion: true`,
  );
}

/** A named class is judged when the volumes are about to be made with it: on create, or when storage first appears. */
function checksStorageClass(spec: MyAppInstanceSpec, old: AdmittedInstance | undefined): boolean {
  if (spec.storageClassName === undefined || spec.storage === undefined) return false;
  return old === undefined || old.spec.storage === undefined || old.spec.storageClassName !== spec.storageClassName;
}

function checksDefaultStorageClass(
  spec: MyAppInstanceSpec,
  old: AdmittedInstance | undefined,
  policy: PlatformPolicy,
): boolean {
  if (!policy.requireExpandableStorage || spec.storage === undefined || spec.storageClassName !== undefined) {
    return false;
  }
  return old === undefined || old.spec.storage === undefined;
}

function chartViolations(
  instance: AdmittedInstance,
  old: AdmittedInstance | undefined,
  facts: AdmissionFacts,
  policy: PlatformPolicy,
): Violation[] {
  const chart = instance.spec.chart;
  if (chart === undefined) return [];
  const location = chart.oci ?? chart.repo;
  if (location !== undefined) {
    const oldChart = old?.spec.chart;
    if (oldChart !== undefined && (oldChart.oci ?? oldChart.repo) === location) return [];
    // The words the chart engine uses when it refuses the same source later (chart/sources.ts).
    const refuse = (message: string) => [
      violation(chart.oci !== undefined ? "spec.chart.oci" : "spec.chart.repo", "chartSources", message),
    ];
    const source = describeSource(chart, instance.namespace);
    const platform = sourcePolicy(policy.chartSources);
    if (!allowedBy(platform, location)) return refuse(sourceRefusal(source, platform, undefined));
    if (sameChartSource(chart, policy.defaultChart)) return [];
    const narrowed = namespacePolicy(platform, facts.namespace?.chartSources);
    return allowedBy(narrowed, location)
      ? []
      : refuse(sourceRefusal(source, narrowed, { namespace: instance.namespace }));
  }
  if (!checksChartConfigMap(instance.spec, old)) return [];
  const name = chart.configMap ?? "";
  const source = `ConfigMap ${instance.namespace}/${name}`;
  const create = `kubectl create configmap ${name} --from-file=${chartConfigMapKey}=./chart.tgz`;
  const configMap = facts.chartConfigMap;
  if (!configMap) {
    return [
      violation(
        "spec.chart.configMap",
        "chartConfigMap",
        `${source} does not exist; create it before the instance (${create})`,
      ),
    ];
  }
  if (!configMap.keys.includes(chartConfigMapKey)) {
    return [
      violation(
        "spec.chart.configMap",
        "chartConfigMap",
        `${source} has no binaryData key ${chartConfigMapKey}, so it holds no chart; create it with ${create}`,
      ),
    ];
  }
  return [];
}

/**
 * True when `spec` names a remote chart source its stored version did not, and the platform allows some: then its
 * namespace's annotation may narrow the list.
 */
function namesNewRemoteSource(
  spec: MyAppInstanceSpec,
  old: AdmittedInstance | undefined,
  policy: PlatformPolicy,
): boolean {
  const location = spec.chart?.oci ?? spec.chart?.repo;
  if (location === undefined || policy.chartSources.length === 0) return false;
  const oldChart = old?.spec.chart;
  return oldChart === undefined || (oldChart.oci ?? oldChart.repo) !== location;
}

function checksChartConfigMap(spec: MyAppInstanceSpec, old: AdmittedInstance | undefined): boolean {
  return spec.chart?.configMap !== undefined && old?.spec.chart?.configMap !== spec.chart.configMap;
}

function budgetViolations(
  instance: AdmittedInstance,
  old: AdmittedInstance | undefined,
  facts: AdmissionFacts,
  policy: PlatformPolicy,
): Violation[] {
  // Instances being deleted count until they are gone: their workloads run until then, and a finalizer (a
  // tenant may add one) can hold one there for as long as it likes.
  const otherInstances = (facts.instances ?? []).filter((other) => other.metadata.name !== instance.name);
  // Claims kept past their instance's spec (deleted, scaled down) hold storage no spec counts any more.
  const kept = keptClaimStorage(facts.claims ?? [], otherInstances, {
    name: instance.name,
    replicas: instance.spec.replicas,
    storage: instance.spec.storage,
    chart: instance.spec.chart,
  });
  const others = [...otherInstances.map(instanceUsage), { instances: 0n, replicas: 0n, storage: kept.storage }];
  const deleting = otherInstances.filter((other) => other.metadata.deletionTimestamp !== undefined);
  const before = old === undefined ? undefined : specUsage(old.spec);
  return budgetOverruns(specUsage(instance.spec), before, others, facts.namespace, policy).map((overrun) => {
    if ("unreadable" in overrun) {
      const { label, written, wanted } = overrun.unreadable;
      return violation(
        "metadata.namespace",
        "namespaceBudgetLabel",
        `the namespace's label ${label} is "${written}", not ${wanted}; the platform owner must fix it before ` +
          "instances here can grow",
      );
    }
    const refusal = withKeptClaims(overBudget(instance, overrun), overrun.dimension, kept);
    // Named only where they take part of what was overrun: deleting one that does not would free nothing.
    const counted = deleting.filter((other) => instanceUsage(other)[overrun.dimension] > 0n).length;
    if (counted === 0) return refusal;
    const note = `; that counts ${counted} being deleted: an instance counts until it is gone, as its workload runs until then`;
    return { ...refusal, message: refusal.message + note };
  });
}

/**
 * The refusal says what the namespace uses, though anyone on the pod network can ask for it (the webhook's port
 * cannot tell the apiserver from another caller): the verdict alone gives it away to a few dry runs bisecting
 * `spec.replicas`, so leaving the figure out would hide nothing, and would cost the tenant the one number that says
 * how much to free. Keeping callers other than the apiserver off the port is the platform's NetworkPolicy's job.
 */
function overBudget(instance: AdmittedInstance, overrun: Exclude<Overrun, { unreadable: unknown }>): Violation {
  const { dimension, budget, used, asked } = overrun;
  const setBy = budgetSource(dimension, budget);
  const namespace = `namespace ${instance.namespace}`;
  if (dimension === "instances") {
    return violation(
      "metadata.namespace",
      "namespaceMaxInstances",
      `${namespace} may have at most ${budget.text} instances (${setBy}); it has ${used} without this one`,
    );
  }
  if (dimension === "replicas") {
    return violation(
      "spec.replicas",
      "namespaceMaxReplicas",
      `${namespace} may run at most ${budget.text} replicas in total (${setBy}); it runs ${used} without this ` +
        `instance, which asks for ${asked}`,
    );
  }
  const { storage = "", replicas } = instance.spec;
  return violation(
    "spec.storage",
    "namespaceMaxStorage",
    `${namespace} may use at most ${budget.text} of storage in total (${setBy}); it uses ${formatBytes(used)} ` +
      `without this instance, which asks for ${formatBytes(asked)} (${storage} for each of ${replicas} replicas)`,
  );
}

/** A storage refusal that says how much of the usage is claims kept past their instances, and how to free it. */
function withKeptClaims(
  refusal: Violation,
  dimension: BudgetDimension,
  kept: { readonly storage: bigint; readonly claims: readonly string[] },
): Violation {
  const count = kept.claims.length;
  if (dimension !== "storage" || count === 0) return refusal;
  const claims = count === 1 ? "1 volume claim" : `${count} volume claims`;
  // Named, a few at most: a namespace may keep hundreds.
  const named = kept.claims.slice(0, 5).join(", ") + (count > 5 ? `, and ${count - 5} more` : "");
  return {
    ...refusal,
    message:
      `${refusal.message}; that counts ${claims} (${formatBytes(kept.storage)}: ${named}) kept from deleted or ` +
      "scaled-down instances, which hold their data until deleted (kubectl delete pvc)",
  };
}

function violation(field: string, rule: ViolationRule, text: string): Violation {
  return { field, rule, message: `${field}: ${text}` };
}
