/**
 * A namespace's budget (instances, replicas, storage: the policy's `--namespace-max-*` flags, or the namespace's
 * labels in their place) and what an instance takes of it, shared by the validating webhook (which judges a spec)
 * and the chart wing (which judges what a chart renders, where the spec does not say). Pure.
 *
 * An instance takes 1 instance, its `spec.replicas` and `spec.storage` × replicas; a chart instance at least what
 * its last applied render took (`status.chartUsage`, written by the operator), since a chart decides its
 * workloads' sizes itself. The larger of the two counts: an instance switched away from its chart keeps its
 * render's usage until the operator writes its next status, and the error stays on the safe side.
 */
import {
  namespaceBudgetLabels,
  parseQuantity,
  type BudgetDimension,
  type MyAppInstanceSpec,
  type MyAppInstanceStatus,
} from "../../api/index.ts";
import { parseCountLimit, parseStorageLimit, policyFlags, type PlatformPolicy } from "./policy.ts";

export const budgetDimensions: readonly BudgetDimension[] = ["instances", "replicas", "storage"];

/** What an instance takes of each budget; storage in bytes × 10⁹ (api/quantity.ts). */
export type Usage = Readonly<Record<BudgetDimension, bigint>>;

/** What a spec asks for: 1 instance, its replicas, and storage per replica × replicas. */
export function specUsage(spec: Partial<Pick<MyAppInstanceSpec, "replicas" | "storage">>): Usage {
  const replicas = BigInt(typeof spec.replicas === "number" && Number.isSafeInteger(spec.replicas) ? spec.replicas : 1);
  const size = typeof spec.storage === "string" ? parseQuantity(spec.storage) : undefined;
  return { instances: 1n, replicas, storage: (size?.nanos ?? 0n) * replicas };
}

/** What a stored instance takes: its spec's usage, or its last render's where that is more (see above). */
export function instanceUsage(instance: {
  readonly spec?: Partial<Pick<MyAppInstanceSpec, "replicas" | "storage">> | undefined;
  readonly status?: Pick<MyAppInstanceStatus, "chartUsage"> | undefined;
}): Usage {
  const asked = specUsage(instance.spec ?? {});
  const rendered = instance.status?.chartUsage;
  if (!rendered) return asked;
  const replicas = Number.isSafeInteger(rendered.replicas) ? BigInt(rendered.replicas) : 0n;
  const storage = parseQuantity(rendered.storage)?.nanos ?? 0n;
  return {
    instances: 1n,
    replicas: replicas > asked.replicas ? replicas : asked.replicas,
    storage: storage > asked.storage ? storage : asked.storage,
  };
}

/** True when `asked` is more than `before` in some dimension (a create: before is undefined). */
export function grows(asked: Usage, before: Usage | undefined): boolean {
  return budgetDimensions.some((dimension) => asked[dimension] > (before?.[dimension] ?? 0n));
}

/** A Namespace's labels, as far as budgets read them. */
export interface BudgetNamespace {
  readonly labels: Readonly<Record<string, string>>;
}

/** True when some budget is set for the namespace, by a flag or by one of its labels. */
export function hasBudget(namespace: BudgetNamespace | undefined, policy: PlatformPolicy): boolean {
  return budgetDimensions.some(
    (dimension) =>
      policy.namespaceBudget[dimension] !== undefined ||
      namespace?.labels[namespaceBudgetLabels[dimension]] !== undefined,
  );
}

/** A budget and where it was set, or a label that sets none readable. */
export type Budget =
  | { readonly limit: bigint; readonly text: string; readonly from: "flag" | "label" }
  | { readonly unreadable: { readonly label: string; readonly written: string; readonly wanted: string } };

/** The budget of `dimension` in `namespace`: its label's, else the flag's; undefined when neither sets one. */
function budgetFor(
  dimension: BudgetDimension,
  namespace: BudgetNamespace | undefined,
  policy: PlatformPolicy,
): Budget | undefined {
  const label = namespaceBudgetLabels[dimension];
  const written = namespace?.labels[label];
  if (written !== undefined) {
    const limit = dimension === "storage" ? parseStorageLimit(written, 0)?.nanos : countLimit(written);
    if (limit === undefined) {
      const wanted =
        dimension === "storage"
          ? "a storage quantity such as 500Gi"
          : `a whole number of ${dimension === "instances" ? "instances" : "replicas"}`;
      return { unreadable: { label, written, wanted } };
    }
    return { limit, text: written.trim(), from: "label" };
  }
  const flag = policy.namespaceBudget[dimension];
  if (flag === undefined) return undefined;
  const limit = typeof flag === "number" ? BigInt(flag) : parseStorageLimit(flag, 1)?.nanos;
  return limit === undefined ? undefined : { limit, text: String(flag), from: "flag" };
}

function countLimit(text: string): bigint | undefined {
  const count = parseCountLimit(text);
  return count === undefined ? undefined : BigInt(count);
}

/** One budget a growing instance would go over, or the unreadable label that stops it growing. */
export type Overrun =
  | {
      readonly dimension: BudgetDimension;
      readonly budget: Extract<Budget, { limit: bigint }>;
      /** What the namespace's other instances take. */
      readonly used: bigint;
      readonly asked: bigint;
    }
  | ({ readonly dimension: BudgetDimension } & Extract<Budget, { unreadable: unknown }>);

/**
 * Every budget that `asked` (an instance's usage after the change) would go over, given what the namespace's other
 * instances take. A dimension that does not grow over `before` is never refused, even where the namespace is over
 * a budget lowered since: an instance may always shrink, change other fields, or go.
 */
export function budgetOverruns(
  asked: Usage,
  before: Usage | undefined,
  others: readonly Usage[],
  namespace: BudgetNamespace | undefined,
  policy: PlatformPolicy,
): Overrun[] {
  const found: Overrun[] = [];
  for (const dimension of budgetDimensions) {
    if (asked[dimension] <= (before?.[dimension] ?? 0n)) continue;
    const budget = budgetFor(dimension, namespace, policy);
    if (budget === undefined) continue;
    if ("unreadable" in budget) {
      found.push({ dimension, unreadable: budget.unreadable });
      continue;
    }
    const used = others.reduce((sum, other) => sum + other[dimension], 0n);
    if (used + asked[dimension] > budget.limit) found.push({ dimension, budget, used, asked: asked[dimension] });
  }
  return found;
}

/** Where a budget was set, as messages say it: `--namespace-max-replicas, or the namespace label ...`. */
export function budgetSource(dimension: BudgetDimension, budget: { readonly from: "flag" | "label" }): string {
  const flag = policyFlags[dimension];
  const label = namespaceBudgetLabels[dimension];
  return budget.from === "label"
    ? `the namespace's label ${label}, in place of ${flag}`
    : `${flag}, or the namespace label ${label}`;
}
