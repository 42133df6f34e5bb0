/**
 * The namespace budgets held to what charts render (the chart wing's ChartBudget): admission counts a spec's
 * replicas and storage, but a chart decides its workloads' sizes itself, so without this a tenant with a budget
 * of 10 replicas could run ten chart instances of 50 pods each. A render that would grow its instance past a
 * budget is refused (`ChartOverBudget`), its objects left as they were; otherwise its usage is reserved for the
 * instance until the status says it (status.chartUsage, which admission counts from then on).
 *
 * Renders of one namespace may be checked at once (several workers): the check and the reservation happen with no
 * await between them, after the reads, so two renders cannot both take the last room. Per operator process: the
 * leader reconciles, so it holds every reservation.
 */
import { formatBytes, type MyAppInstanceObject } from "../api/index.ts";
import type { RenderRefusal } from "../chart/index.ts";
import { ForbiddenError, formatObjectKey, parseObjectKey, type ObjectKey } from "../kube/index.ts";
import { freshestInstances } from "./admission/freshest-instances.ts";
import { keptClaimStorage } from "./admission/kept-claims.ts";
import type { ClaimFacts } from "./admission/kept-claims.ts";
import type { AdmissionLookups } from "./admission/lookups.ts";
import {
  budgetOverruns,
  budgetSource,
  grows,
  hasBudget,
  instanceUsage,
  type Overrun,
  type Usage,
} from "./admission/namespace-budget.ts";
import type { PlatformPolicy } from "./admission/policy.ts";
import type { NamespaceFacts } from "./admission/validate.ts";
import type { ChartBudget } from "./chart/index.ts";

/** The budgets of `policy` for renders, reading Namespaces and instances through `lookups`. */
export function chartBudget(
  policy: PlatformPolicy,
  lookups: Pick<AdmissionLookups, "namespace" | "instancesIn" | "claimsIn" | "freshNamespace" | "liveUsageIn">,
): ChartBudget {
  const reserved = new Map<string, Usage>();
  const counted = (instance: MyAppInstanceObject): Usage =>
    reserved.get(formatObjectKey(keyOf(instance))) ?? instanceUsage(instance);
  /** Instances of `namespace` with a reservation that `shown` lacks, as placeholders {@link counted} reads. */
  const reservedBeyond = (namespace: string, shown: readonly MyAppInstanceObject[]): MyAppInstanceObject[] => {
    const names = new Set(shown.map((instance) => instance.metadata.name));
    return (
      [...reserved.keys()]
        .map((id) => parseObjectKey(id))
        .filter((other) => other.namespace === namespace && !names.has(other.name))
        // Renders reserve for chart instances only: their claims are counted against their renders (kept-claims.ts).
        .map((other) => ({ metadata: other, spec: { chart: {} } }) as unknown as MyAppInstanceObject)
    );
  };

  return {
    async reserve(key, usage) {
      const id = formatObjectKey(key);
      // The instance count is admission's business: a render only decides replicas and storage.
      const asked: Usage = { instances: 1n, replicas: usage.replicas, storage: usage.storageNanos };
      const self = (await lookups.instancesIn(key.namespace)).find((instance) => instance.metadata.name === key.name);
      const before = reserved.get(id) ?? (self ? instanceUsage(self) : nothingYet);
      // Not growing (a converged instance rendering again, or a render that asks what the spec did): no read.
      if (grows(asked, before)) {
        const storageGrows = asked.storage > before.storage;
        /** The first budget the render breaks, on a Namespace, the instances and claims (or none, when it fits). */
        const overrunOn = (
          namespace: NamespaceFacts | undefined,
          listed: readonly MyAppInstanceObject[],
          claims: readonly ClaimFacts[],
        ): Overrun | undefined => {
          // being deleted still counts: its workloads run until it is gone (validate.ts says why)
          const instances = listed.filter((other) => other.metadata.name !== key.name);
          // Claims kept past what their instances count hold storage too (kept-claims.ts): the built-in template's
          // past their instances, a chart's of replicas scaled away (this one's own beyond what it renders now).
          const kept = storageGrows
            ? keptClaimStorage(
                claims,
                instances,
                { name: key.name, chart: true, chartStorage: asked.storage },
                (other) => counted(other).storage,
              )
            : undefined;
          const others = [...instances.map(counted), { instances: 0n, replicas: 0n, storage: kept?.storage ?? 0n }];
          return budgetOverruns(asked, before, others, namespace, policy)[0];
        };
        const namespace = await lookups.namespace(key.namespace);
        if (hasBudget(namespace, policy)) {
          const [instances, claims] = await Promise.all([
            lookups.instancesIn(key.namespace),
            storageGrows ? lookups.claimsIn(key.namespace) : [],
          ]);
          if (overrunOn(namespace, instances, claims)) {
            // Refused on what the apiserver has, read afresh: the cache and the 5 s reuse of a Namespace may lag a
            // shrink, a deletion or a label the tenant just changed, and a refusal is looked at again only slowly.
            const [fresh, usage] = await Promise.all([
              lookups.freshNamespace(key.namespace),
              lookups.liveUsageIn(key.namespace, storageGrows),
            ]);
            // The list, with what the cache has shown since it began, and what renders reserved for instances
            // neither shows yet; no await between this check and the reservation below (see the header).
            const since = freshestInstances(
              usage.instances,
              usage.resourceVersion,
              await lookups.instancesIn(key.namespace),
            );
            const overrun = hasBudget(fresh, policy)
              ? overrunOn(fresh, [...since, ...reservedBeyond(key.namespace, since)], usage.claims)
              : undefined;
            if (overrun) return refusal(key, overrun, asked);
          }
        }
      }
      reserved.set(id, asked);
      return undefined;
    },
    forget(key) {
      reserved.delete(formatObjectKey(key));
    },
    async counts(namespace) {
      if (hasBudget(undefined, policy)) return true;
      // Where the operator may not read Namespaces (a namespaced install with no budget), no label sets one here.
      const read = await lookups.namespace(namespace).catch((error: unknown) => {
        if (error instanceof ForbiddenError) return undefined;
        throw error;
      });
      return hasBudget(read, policy);
    },
  };
}

/** An instance the cache does not show yet: admitted, so its own count is taken; its render's sizes are not. */
const nothingYet: Usage = { instances: 1n, replicas: 0n, storage: 0n };

function keyOf(instance: MyAppInstanceObject): ObjectKey {
  return { namespace: instance.metadata.namespace ?? "", name: instance.metadata.name ?? "" };
}

function refusal(key: ObjectKey, overrun: Overrun, asked: Usage): RenderRefusal {
  // Other instances shrinking, or a label raised, frees the room without this instance changing.
  const reason = "ChartOverBudget";
  const outsideSpec = true;
  if ("unreadable" in overrun) {
    const { label, written, wanted } = overrun.unreadable;
    return {
      reason,
      outsideSpec,
      message:
        `the namespace's label ${label} is "${written}", not ${wanted}; the platform owner must fix it before ` +
        "the chart's workloads here can grow",
    };
  }
  const { dimension, budget, used } = overrun;
  const namespace = `namespace ${key.namespace}`;
  const setBy = budgetSource(dimension, budget);
  const advice = "; render less (spec.replicas or spec.values), or ask the platform owner for a larger budget";
  if (dimension === "storage") {
    return {
      reason,
      outsideSpec,
      message:
        `the chart's StatefulSets claim ${formatBytes(asked.storage)} (claim templates × replicas), and ${namespace} ` +
        `may use at most ${budget.text} of storage in total (${setBy}); it uses ${formatBytes(used)} without this ` +
        `instance${advice}`,
    };
  }
  return {
    reason,
    outsideSpec,
    message:
      `the chart runs up to ${asked.replicas} replicas (its workloads' spec.replicas, or their autoscalers' ` +
      `maxReplicas), and ${namespace} may run at most ${budget.text} in total (${setBy}); it runs ${used} ` +
      `without this instance${advice}`,
  };
}
