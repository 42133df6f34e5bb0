/**
 * Lists the reconcile reads from the apiserver instead of the cache (a field selector: the claims of a deleted
 * instance's namespace, the events of one StatefulSet), bounded in what they cost. The objects they return are a
 * tenant's: a namespace's PersistentVolumeClaims or Events can be made megabytes each (a claim's `spec.selector`, a
 * core Event's message have no size limit but the object's), and read whole, a few hundred of them exhausted the
 * operator's heap, again at every restart. So each list is read item by item (kube/client.ts listEach), each item
 * kept only in the fields the reconcile reads, an Event longer than any the controllers write not even parsed, and
 * the whole list held to a budget: past it, the reconcile fails naming the namespace, the kind and the budget, and
 * is retried with backoff, costing that one instance, not the operator.
 */
import type { KubeClient, KubeObject, ObjectMeta } from "../../kube/index.ts";

/** Most characters of kept items one live list may hold (their projections as JSON). */
export const liveListBudgetChars = 16 * 1024 * 1024;

/**
 * Most characters one live list may read, items skipped or projected included, by kind: what it costs the
 * apiserver and the operator to read, whatever is kept. A StatefulSet's Events, which a reconcile lists every few
 * seconds while pods are missing, are a few KiB as its controller writes them; a tenant's 300 Events of 1 MB made
 * each such list read 300 MB (2.8 GB a minute) while keeping nothing. Other lists read at most four times what they
 * may keep: an instance's claims are read at each of its reconciles where the cache does not keep them (a namespace
 * past its limit, operator/runtime/informer.ts), and 1,100 labelled claims of 150 KB made each read 165 MB.
 */
export function liveListReadBudgetChars(kind: string): number {
  return kind === "Event" ? 1024 * 1024 : 4 * liveListBudgetChars;
}

/**
 * Items per page of a live list: the apiserver reads a page at a time (a list without a limit is read whole before
 * the first byte is sent), so a list stopped at its budget has cost at most one page more.
 */
export const liveListPageSize = 50;

/**
 * An Event message is kept up to this many characters: as long as a status message may be
 * (operator/reconcile/status-limits.ts), where a StatefulSet's failure to create pods is quoted (a Pod Security
 * refusal of several containers runs to a few KiB).
 */
export const eventMessageChars = 4096;

/** An Event item longer than this is not one a controller wrote: left unparsed (kube/client.ts listEach). */
export const maxEventItemChars = 64 * 1024;

/**
 * Thrown when a live list's kept items would pass {@link liveListBudgetChars}, or what it read
 * {@link liveListReadBudgetChars}.
 */
export class LiveListTooLarge extends Error {
  readonly kind: string;

  constructor(kind: string, namespace: string, read: number, what: "kept" | "read" = "kept") {
    const budget = what === "kept" ? liveListBudgetChars : liveListReadBudgetChars(kind);
    const size = `${budget / 1024 / 1024} MiB${what === "kept" ? " even as the operator keeps them" : " to read"}`;
    super(
      `the ${kind} objects of namespace ${namespace || "(cluster)"} this instance reads take more than ${size} ` +
        `(${read} read before it stopped): delete the oversized ones ` +
        `(kubectl get ${kind.toLowerCase()} -n ${namespace} -o json shows them)`,
    );
    this.name = "LiveListTooLarge";
    this.kind = kind;
  }
}

/**
 * The first {@link eventMessageChars} of `text`, as a string of its own: V8 makes a slice of a long string refer
 * to all of it, which would keep a megabyte message alive for its first KiB.
 */
function messageStart(text: unknown): string | undefined {
  if (typeof text !== "string") return undefined;
  return text.length <= eventMessageChars
    ? text
    : (JSON.parse(JSON.stringify(text.slice(0, eventMessageChars))) as string);
}

/** The fields of an object's metadata a reconcile reads of a listed object. */
function keptMetadata(metadata: ObjectMeta): ObjectMeta {
  const { name, namespace, uid, resourceVersion, labels, ownerReferences, creationTimestamp, deletionTimestamp } =
    metadata;
  const { finalizers } = metadata;
  // creationTimestamp: the time of an Event that carries no other (operator/reconcile/rollout.ts lastSeen).
  return {
    name,
    namespace,
    uid,
    resourceVersion,
    labels,
    ownerReferences,
    creationTimestamp,
    deletionTimestamp,
    finalizers,
  };
}

interface Listed {
  readonly spec?: Record<string, unknown>;
  readonly status?: Record<string, unknown>;
  readonly message?: unknown;
  readonly [field: string]: unknown;
}

/** What a live list keeps of an item, by kind: the fields operator/reconcile/observed.ts and rollout.ts read. */
export function keptOfListed(object: KubeObject): KubeObject {
  const item = object as KubeObject & Listed;
  const metadata = keptMetadata(item.metadata);
  if (object.kind === "PersistentVolumeClaim") {
    const spec = item.spec as { storageClassName?: string; resources?: { requests?: { storage?: string } } };
    const status = item.status as
      | {
          phase?: string;
          capacity?: { storage?: string };
          conditions?: { type?: string; status?: string; message?: string }[];
          allocatedResourceStatuses?: Record<string, string>;
        }
      | undefined;
    return {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata,
      spec: {
        storageClassName: spec?.storageClassName,
        resources: { requests: { storage: spec?.resources?.requests?.storage } },
      },
      status: {
        phase: status?.phase,
        capacity: { storage: status?.capacity?.storage },
        conditions: (status?.conditions ?? []).slice(0, 16).map(({ type, status: value, message }) => ({
          type,
          status: value,
          message: messageStart(message),
        })),
        allocatedResourceStatuses: status?.allocatedResourceStatuses?.["storage"]
          ? { storage: status.allocatedResourceStatuses["storage"] }
          : undefined,
      },
    } as KubeObject;
  }
  if (object.kind === "Event") {
    const { reason, message, lastTimestamp, eventTime, series, type } = item as Listed & {
      series?: { lastObservedTime?: string };
    };
    return {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata,
      reason,
      message: messageStart(message),
      lastTimestamp,
      eventTime,
      series: series ? { lastObservedTime: series.lastObservedTime } : undefined,
      type,
    } as KubeObject;
  }
  return object;
}

/**
 * The items of a live list, each as {@link keptOfListed} keeps it, within {@link liveListBudgetChars} kept and
 * {@link liveListReadBudgetChars} read, a page of {@link liveListPageSize} at a time; Events longer than
 * {@link maxEventItemChars} are skipped unparsed (and count as read).
 */
export async function boundedLiveList<T extends KubeObject>(
  client: Pick<KubeClient, "listEach">,
  apiVersion: string,
  kind: string,
  options: {
    readonly namespace: string;
    readonly labelSelector: string;
    readonly fieldSelector?: string;
    /** What to keep of each item. @default keptOfListed */
    readonly keep?: (object: KubeObject) => KubeObject;
  },
): Promise<T[]> {
  const keep = options.keep ?? keptOfListed;
  const readBudget = liveListReadBudgetChars(kind);
  let kept = 0;
  let readChars = 0;
  let read = 0;
  const items: T[] = [];
  let token: string | undefined;
  do {
    const page = await client.listEach(
      apiVersion,
      kind,
      {
        namespace: options.namespace,
        labelSelector: options.labelSelector,
        ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
        limit: liveListPageSize,
        ...(token ? { continue: token } : {}),
      },
      (item, textLength) => {
        const projected = keep(item);
        // A projection's size: the item's own length where it is kept whole, else measured (projections are small).
        kept += projected === item ? textLength : JSON.stringify(projected).length;
        if (kept > liveListBudgetChars) throw new LiveListTooLarge(kind, options.namespace, read);
        return projected as T;
      },
      {
        ...(kind === "Event" ? { maxItemChars: maxEventItemChars } : {}),
        onItemText: (textLength) => {
          read += 1;
          readChars += textLength;
          if (readChars > readBudget) throw new LiveListTooLarge(kind, options.namespace, read, "read");
        },
      },
    );
    for (const item of page.items) items.push(item);
    token = page.metadata.continue || undefined;
  } while (token);
  return items;
}
