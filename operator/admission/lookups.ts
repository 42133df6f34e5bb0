/**
 * What the webhook reads from the cluster: the narrow client review.ts uses, and its implementation on the manager's
 * informer cache and the KubeClient. The only I/O of admission.
 *
 * Instances come from the cache (every replica runs the informers, leader or not, so every replica has them in
 * memory); a namespace outside the cache (not watched, or not synced yet) is listed from the apiserver's watch
 * cache (resourceVersion 0). Where the cache says a budget refuses, the namespace's labels, instances and claims
 * are read afresh (a consistent read: no resourceVersion), so the refusal is said on the apiserver's word, not on a
 * watch that may lag a shrink, a deletion or a label the tenant just changed (admitted-writes.ts counts what the
 * cache lags the other way); those reads are shared by the reviews waiting for them (fresh-reads.ts). The
 * rest is one GET each, made only when the verdict needs it (validate.ts `factsNeeded`): the Namespace (its budget
 * labels, Pod Security label and chart-sources annotation), a StorageClass, a chart ConfigMap, and the list of
 * StorageClasses when the default class must allow expansion; and a list of the namespace's operator-made volume
 * claims where storage grows under a budget (kept-claims.ts; all of its claims where a chart's StatefulSet makes
 * some, chart-claims.ts). Namespaces, StorageClasses and chart ConfigMaps that
 * hold a chart are reused for 5 s (recent-reads.ts; the mutating default reads its Namespace afresh, as what it
 * sets is stored), and every read from the apiserver waits for one of a few slots,
 * by turns across namespaces (fair-limiter.ts): reviews come from anyone on the pod network, and each read's answer
 * is held while it is parsed.
 */
import {
  allChildrenSelector,
  apiVersion,
  appName,
  chartConfigMapKey,
  labelKeys,
  kind,
  managedBy,
  namespaceChartSourcesAnnotation,
  type MyAppInstanceObject,
} from "../../api/index.ts";
import type { KubeClient, KubeObject } from "../../kube/index.ts";
import type { CacheReader } from "../runtime/cache.ts";
import { fairLimiter, type FairLimiterOptions } from "./fair-limiter.ts";
import { freshReads } from "./fresh-reads.ts";
import { recentReads, type RecentReadsOptions } from "./recent-reads.ts";
import type { ClaimFacts } from "./kept-claims.ts";
import { chartClaimInstance, chartClaimMakers, type ChartClaimMakers } from "./chart-claims.ts";
import { chartInstanceLabel } from "../chart/owned.ts";
import type { ClaimMaker } from "../reconcile/claim-owners.ts";
import type { ConfigMapFacts, NamespaceFacts, StorageClassFacts } from "./validate.ts";
import { byCodeUnits } from "../../api/code-unit-order.ts";

/**
 * The least time between two fresh lists of a namespace's instances (or claims): a refusal waits at most this much
 * longer, and a tenant's refused writes, however many, list its namespace at most 5 times a second.
 */
export const freshListGapMs = 200;

/** The reads admission makes. Each resolves `undefined` for an object that does not exist. */
export interface AdmissionLookups {
  namespace(name: string): Promise<NamespaceFacts | undefined>;
  storageClass(name: string): Promise<StorageClassFacts | undefined>;
  /** The class a claim without `storageClassName` gets; undefined when the cluster has none. */
  defaultStorageClass(): Promise<StorageClassFacts | undefined>;
  chartConfigMap(namespace: string, name: string): Promise<ConfigMapFacts | undefined>;
  instancesIn(namespace: string): Promise<readonly MyAppInstanceObject[]>;
  /**
   * The volume claims the operator's StatefulSets made in `namespace`: the built-in template's by its children's
   * labels, a chart's by their names (chart-claims.ts).
   */
  claimsIn(namespace: string): Promise<readonly ClaimFacts[]>;
  /** The Namespace as read after the call, not reused (fresh-reads.ts): its labels as the tenant just set them. */
  freshNamespace(name: string): Promise<NamespaceFacts | undefined>;
  /**
   * The namespace's instances (and volume claims, with `claims`) as read after the call, neither from the cache nor
   * reused (fresh-reads.ts): what a budget's refusal is said on, as the cache may not show yet a shrink, a deletion
   * or a freed claim the tenant has just made. Of each instance only what a budget reads.
   */
  liveUsageIn(namespace: string, claims: boolean): Promise<LiveUsage>;
  /** One instance, for a write to its scale subresource (whose review carries a Scale, not the instance). */
  instance(namespace: string, name: string): Promise<MyAppInstanceObject | undefined>;
  /** One instance as the apiserver has it now, not as the cache does: whether a remembered write was stored. */
  liveInstance(namespace: string, name: string): Promise<MyAppInstanceObject | undefined>;
}

/** A namespace's usage as {@link AdmissionLookups.liveUsageIn} reads it. */
export interface LiveUsage {
  readonly instances: readonly MyAppInstanceObject[];
  /** The instances list's resourceVersion: what the cache shows past it was stored since (freshest-instances.ts). */
  readonly resourceVersion: string | undefined;
  readonly claims: readonly ClaimFacts[];
}

type StorageClass = KubeObject & { allowVolumeExpansion?: boolean };

// The annotations that mark the default class (the beta one is still honoured by the apiserver).
const defaultClassAnnotations = [
  "storageclass.kubernetes.io/is-default-class",
  "storageclass.beta.kubernetes.io/is-default-class",
];

/** The lookups on a client and the manager's cache. */
export function kubeLookups(
  client: KubeClient,
  cache: CacheReader,
  reuse: RecentReadsOptions = {},
  limits: FairLimiterOptions = {},
): AdmissionLookups {
  // Turns are by namespace; cluster-scoped reads take theirs as one more.
  const limited = fairLimiter(limits);
  const cluster = "";
  // A tenant applying many instances asks about the same Namespace (and StorageClass) each time: see recent-reads.ts.
  const readNamespace = async (name: string): Promise<NamespaceFacts | undefined> => {
    const found = await limited(name, () => client.find("v1", "Namespace", name));
    if (!found) return undefined;
    const chartSources = found.metadata.annotations?.[namespaceChartSourcesAnnotation];
    return { labels: found.metadata.labels ?? {}, ...(chartSources !== undefined ? { chartSources } : {}) };
  };
  const namespace = recentReads(readNamespace, reuse);
  // The StatefulSets of the namespace that an instance controls and that make claims (a chart's, by their claims'
  // names: chart-claims.ts): from the cache, which watches the operator's StatefulSets, or a list of them.
  const ours = `${labelKeys.managedBy}=${managedBy}`;
  const claimMakers = async (namespace: string): Promise<ChartClaimMakers> => {
    const statefulSets = cache.covers("apps/v1", "StatefulSet", namespace)
      ? cache.list<ClaimMaker>("apps/v1", "StatefulSet", namespace, "")
      : (
          await limited(namespace, () =>
            client.listEach("apps/v1", "StatefulSet", { namespace, labelSelector: ours }, claimMakerFacts),
          )
        ).items;
    return chartClaimMakers(statefulSets);
  };
  // Claims only where storage grows in a namespace with a budget; reviews at once share one list. Item by item,
  // keeping the fields the budget reads: a tenant may label any number of claims as the operator's. Where a
  // chart's StatefulSets make claims (which carry the chart's labels), every claim of the namespace is listed and
  // theirs kept by name.
  const readClaims = async (namespace: string): Promise<readonly ClaimFacts[]> => {
    const makers = await claimMakers(namespace);
    if (makers.size === 0) {
      const listed = await limited(namespace, () =>
        client.listEach("v1", "PersistentVolumeClaim", { namespace, labelSelector: allChildrenSelector }, claimFacts),
      );
      return listed.items;
    }
    const listed = await limited(namespace, () =>
      client.listEach("v1", "PersistentVolumeClaim", { namespace }, (claim): ClaimFacts | undefined => {
        const chartInstance = chartClaimInstance(claim, makers);
        if (chartInstance !== undefined) return { ...claimFacts(claim), chartInstance };
        return isOperatorClaim(claim) ? claimFacts(claim) : undefined;
      }),
    );
    return listed.items.filter((claim) => claim !== undefined);
  };
  // No resourceVersion: as fresh as the apiserver has them. Each shared by the reviews that can share it, and a
  // namespace's lists begun at least `freshListGapMs` apart: refusals sent back to back list it no more often.
  const gap = { minGapMs: freshListGapMs };
  const freshClaims = freshReads(readClaims, gap);
  const claimsNow = freshReads(readClaims);
  const freshInstances = freshReads(
    (namespace) => limited(namespace, () => client.listEach(apiVersion, kind, { namespace }, budgetFacts)),
    gap,
  );
  const storageClass = recentReads(async (name): Promise<StorageClassFacts | undefined> => {
    const found = await limited(cluster, () => client.find<StorageClass>("storage.k8s.io/v1", "StorageClass", name));
    return found && storageClassFacts(found);
  }, reuse);
  // Each review of a chart instance names its ConfigMap, up to ~1.3 MB: one GET for concurrent reviews, and the
  // verdict's one fact kept (whether it holds a chart), never its data. Only a ConfigMap that holds a chart is
  // reused: one missing or wrong is read afresh, as its tenant may be creating or fixing it right now.
  const chartConfigMap = recentReads(
    async (key): Promise<ConfigMapFacts | undefined> => {
      const [namespace = "", name = ""] = key.split("/");
      const found = await limited(namespace, () =>
        client.find<KubeObject & { binaryData?: Record<string, string> }>("v1", "ConfigMap", name, namespace),
      );
      return found && { keys: Object.hasOwn(found.binaryData ?? {}, chartConfigMapKey) ? [chartConfigMapKey] : [] };
    },
    { ...reuse, keep: (facts) => facts?.keys.includes(chartConfigMapKey) === true },
  );
  // A list by name, not a GET: the operator's role lists instances but does not get them.
  const byName = (namespace: string, name: string, resourceVersion: "0" | undefined) =>
    limited(namespace, () =>
      client.list<KubeObject>(apiVersion, kind, {
        namespace,
        fieldSelector: `metadata.name=${name}`,
        ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      }),
    ).then((listed) => listed.items[0] as MyAppInstanceObject | undefined);
  const liveByName = freshReads((key) => {
    const [namespace = "", name = ""] = key.split("/");
    return byName(namespace, name, undefined);
  });
  return {
    namespace,
    storageClass,
    async defaultStorageClass() {
      const classes = await limited(cluster, () => client.list<StorageClass>("storage.k8s.io/v1", "StorageClass"));
      const chosen = defaultStorageClass(classes.items);
      return chosen && storageClassFacts(chosen);
    },
    chartConfigMap: (namespace, name) => chartConfigMap(`${namespace}/${name}`),
    // Not reused: a list from before a scale-down's claims existed would not count them (a tenant scaling down and
    // creating within the reuse would pass); shared by the reviews waiting for it, without the gap of the lists a
    // refusal makes (a claim is a small object, and a tenant's applies one after another must not wait on it).
    claimsIn: (namespace) => claimsNow(namespace),
    async instancesIn(namespace) {
      if (cache.covers(apiVersion, kind, namespace))
        return cache.list<MyAppInstanceObject>(apiVersion, kind, namespace, "");
      const listed = await limited(namespace, () =>
        client.listEach(apiVersion, kind, { namespace, resourceVersion: "0" }, budgetFacts),
      );
      return listed.items;
    },
    freshNamespace: freshReads(readNamespace),
    async liveUsageIn(namespace, withClaims) {
      const [instances, claims] = await Promise.all([
        freshInstances(namespace),
        withClaims ? freshClaims(namespace) : [],
      ]);
      return { instances: instances.items, resourceVersion: instances.metadata.resourceVersion, claims };
    },
    async instance(namespace, name) {
      if (cache.covers(apiVersion, kind, namespace))
        return cache.get<MyAppInstanceObject>(apiVersion, kind, name, namespace);
      return byName(namespace, name, "0");
    },
    // No resourceVersion: a consistent read, which a cache (the informer's or the apiserver's) may lag behind;
    // shared by the reviews asking for the same instance at once (fresh-reads.ts).
    liveInstance: (namespace, name) => liveByName(`${namespace}/${name}`),
  };
}

/**
 * What a budget reads of a listed instance (namespace-budget.ts, kept-claims.ts), item by item as the list is
 * parsed: a namespace's instances may carry large values (128 KiB each by default), which a list must not hold.
 */
function budgetFacts(item: KubeObject): MyAppInstanceObject {
  const { spec, status } = item as Partial<MyAppInstanceObject>;
  const { name, namespace, resourceVersion, deletionTimestamp } = item.metadata;
  return {
    apiVersion,
    kind,
    metadata: {
      name,
      namespace,
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      ...(deletionTimestamp !== undefined ? { deletionTimestamp } : {}),
    },
    spec: {
      replicas: spec?.replicas,
      ...(spec?.storage !== undefined ? { storage: spec.storage } : {}),
      ...(spec?.chart !== undefined ? { chart: spec.chart } : {}),
    },
    ...(status?.chartUsage !== undefined ? { status: { chartUsage: status.chartUsage } } : {}),
  } as MyAppInstanceObject;
}

/** Whether `claim` carries the labels of the operator's own claims ({@link allChildrenSelector}). */
function isOperatorClaim(claim: KubeObject): boolean {
  const labels = claim.metadata.labels ?? {};
  return labels[labelKeys.managedBy] === managedBy && labels[labelKeys.name] === appName;
}

/** What the claims' attribution reads of a listed StatefulSet: its name, uid, controller and claim templates' names. */
function claimMakerFacts(item: KubeObject): ClaimMaker {
  const { name, uid, ownerReferences, labels } = item.metadata;
  const controller = ownerReferences?.find((reference) => reference.controller === true);
  const chart = labels?.[chartInstanceLabel];
  const spec = item["spec"] as { volumeClaimTemplates?: unknown } | undefined;
  const templates = Array.isArray(spec?.volumeClaimTemplates) ? (spec.volumeClaimTemplates as unknown[]) : [];
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name,
      uid,
      ...(chart !== undefined ? { labels: { [chartInstanceLabel]: chart } } : {}),
      ...(controller ? { ownerReferences: [controller] } : {}),
    },
    spec: {
      volumeClaimTemplates: templates.flatMap((template) => {
        const templateName = (template as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
        return typeof templateName === "string" ? [{ metadata: { name: templateName } }] : [];
      }),
    },
  };
}

function claimFacts(claim: KubeObject): ClaimFacts {
  const spec = (claim as { spec?: { resources?: { requests?: { storage?: unknown } } } }).spec;
  const storage = spec?.resources?.requests?.storage;
  return {
    name: claim.metadata.name ?? "",
    instance: claim.metadata.labels?.[labelKeys.instance],
    storage: typeof storage === "string" ? storage : typeof storage === "number" ? String(storage) : undefined,
  };
}

function storageClassFacts(storageClass: StorageClass): StorageClassFacts {
  const name = storageClass.metadata.name ?? "";
  return storageClass.allowVolumeExpansion === undefined
    ? { name }
    : { name, allowVolumeExpansion: storageClass.allowVolumeExpansion };
}

/**
 * The class the apiserver's DefaultStorageClass admission gives a claim without one: of those marked default,
 * the newest (then the first by name), as Kubernetes picks since 1.26.
 */
export function defaultStorageClass<T extends KubeObject>(classes: readonly T[]): T | undefined {
  return classes
    .filter((item) => defaultClassAnnotations.some((key) => item.metadata.annotations?.[key] === "true"))
    .sort(
      (a, b) =>
        byCodeUnits(b.metadata.creationTimestamp ?? "", a.metadata.creationTimestamp ?? "") ||
        byCodeUnits(a.metadata.name ?? "", b.metadata.name ?? ""),
    )[0];
}
