/**
 * Which objects of a chart the informer cache keeps whole, and the copies a reconcile read live where it kept less.
 * Pure: the informers' transforms (operator/watched-kinds.ts) ask it, the chart step (apply.ts) tells it.
 *
 * The cache selects by the operator's label, and anyone who may create an object in a namespace may give it the
 * label of an instance's chart and a controller reference to that instance, uid and all; they may also add to an
 * object the operator applied. So neither label nor controller makes an object one whose content a reconcile
 * reads: the cache keeps an object of a chart whole only when the instance's current render names it (recorded
 * before the render is applied, so the watch finds a new object named) and it is at most {@link keptBytes} of what
 * the render sets. Anything else is kept as its identity (a StatefulSet: what the finalizer reads of it), marked
 * {@link contentWithheld}. What a tenant's objects can make the operator keep is then what its renders set, not
 * what the tenant writes; whether a render is applied or never comes (a chart that does not render prunes nothing)
 * makes no difference.
 *
 * What renders set is bounded too ({@link KeptBudget}): all renders kept whole together, and one namespace's. A
 * tenant whose instances render megabytes each (any chart can, within the output limit) would otherwise fill the
 * heap with them, one instance after another; a render past either budget is kept as identities, and its
 * reconciles read what they need live, as after a start. A render's charge is released only as the cache lets go
 * of what it kept whole: when it is forgotten or replaced by one past the budget, the cache is told to keep its
 * objects again as the transforms now say ({@link RenderedChildren.whenWithdrawn}), since no watch event may come
 * for them (an instance held in deletion by a tenant's finalizer, objects a new render does not change).
 *
 * What is recorded here lives in memory: after a start or a leader change, until an instance renders, the cache
 * keeps its objects as identities. The render's reconcile reads those it needs live, once: the copy is kept here
 * while the cache has nothing newer of the object, so the reconciles after it read nothing live.
 */
import type { RenderedObject } from "../../chart/index.ts";
import { namespaceShareBytes } from "../../chart/lru-cache.ts";
import { objectId } from "./plan.ts";

/**
 * The most the renders kept whole may set together (`maxBytes`, of their objects' JSON), and the most one
 * namespace's may (`namespaceBytes`).
 */
export interface KeptBudget {
  readonly maxBytes: number;
  readonly namespaceBytes: number;
}

/**
 * A budget of `maxBytes` for renders that may each set `largestRenderBytes`: a namespace's share as the render
 * cache's (chart/lru-cache.ts), a quarter, or one render at the output limit if that is more (never past the whole).
 */
export function keptBudget(maxBytes: number, largestRenderBytes: number): KeptBudget {
  return { maxBytes, namespaceBytes: Math.min(maxBytes, namespaceShareBytes(maxBytes, largestRenderBytes)) };
}

/** No bound: tests and tools that keep a handful of renders. */
const unbounded: KeptBudget = { maxBytes: Infinity, namespaceBytes: Infinity };

/** An instance's namespace and name. */
export interface InstanceName {
  readonly namespace: string;
  readonly name: string;
}

/** An object as far as this file looks at it. */
export interface Identified {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly uid?: string; readonly resourceVersion?: string };
}

/** The top-level field that marks a cached object the cache kept only part of (the apiserver never sends it). */
export const contentWithheld = "contentWithheld";

/** `object` marked as kept in part: a reader that needs its content reads it live. */
export function withheld<T extends object>(object: T): T {
  return { ...object, [contentWithheld]: true };
}

/** Whether the cache kept only part of `object` (see {@link withheld}). */
export function isContentWithheld(object: object): boolean {
  return (object as Record<string, unknown>)[contentWithheld] === true;
}

/** What an object weighs in the cache: its JSON without managedFields (which the cache never keeps). */
export function contentBytes(object: { readonly metadata: object }): number {
  return JSON.stringify({ ...object, metadata: { ...object.metadata, managedFields: undefined } }).length;
}

/**
 * The most the cache keeps whole of an object the render sets in `renderedBytes`: twice that (the server's
 * defaults), plus 16 KiB (its status and metadata). Past it, someone added to the object: a reconcile reads it
 * live when it needs it.
 */
export function keptBytes(renderedBytes: number): number {
  return 2 * renderedBytes + 16 * 1024;
}

interface Render {
  readonly uid: string;
  /** What the render sets of each object it names, by objectId; none when it is past a budget (kept as identities). */
  readonly bytes: ReadonlyMap<string, number>;
  /** Copies read live of objects the cache keeps as identities, by objectId. */
  readonly copies: Map<string, Identified>;
  /** What it counts against the budgets: the sum of `bytes`. */
  readonly charged: number;
}

/** The current render of each chart instance, and the copies its reconcile read live. */
export class RenderedChildren {
  private readonly renders = new Map<string, Render>();
  private readonly budget: KeptBudget;
  private readonly chargedByNamespace = new Map<string, number>();
  private charged = 0;
  private withdrawn: (instance: InstanceName) => void = () => {};

  constructor(budget: KeptBudget = unbounded) {
    this.budget = budget;
  }

  /**
   * Calls `withdraw` when an instance's objects the cache kept whole are no longer to be: the cache then keeps them
   * again as its transforms say (identities), so what it holds follows the charge.
   */
  whenWithdrawn(withdraw: (instance: InstanceName) => void): void {
    this.withdrawn = withdraw;
  }

  /**
   * Records the render the instance `uid` is about to apply (the objects the operator may read; Secrets are not
   * cached). Copies of objects it still names at no more than it keeps are kept. False when the render is past a
   * budget: the cache keeps its objects as identities, and nothing read live of them is kept.
   */
  record(instance: InstanceName, uid: string, objects: readonly RenderedObject[]): boolean {
    const key = keyOf(instance.namespace, instance.name);
    const before = this.renders.get(key);
    if (before) this.charge(instance.namespace, -before.charged);
    const bytes = new Map(objects.map((object) => [objectId(object), contentBytes(object)]));
    const total = [...bytes.values()].reduce((sum, n) => sum + n, 0);
    const inNamespace = this.chargedByNamespace.get(instance.namespace) ?? 0;
    if (this.charged + total > this.budget.maxBytes || inNamespace + total > this.budget.namespaceBytes) {
      this.renders.set(key, { uid, bytes: new Map(), copies: new Map(), charged: 0 });
      if (before && before.charged > 0) this.withdrawn(instance);
      return false;
    }
    const copies = new Map<string, Identified>();
    for (const [id, copy] of before?.uid === uid ? before.copies : []) {
      const rendered = bytes.get(id);
      if (rendered !== undefined && contentBytes(copy) <= keptBytes(rendered)) copies.set(id, copy);
    }
    this.renders.set(key, { uid, bytes, copies, charged: total });
    this.charge(instance.namespace, total);
    return true;
  }

  /** Forgets the instance's render and copies (it is gone, being deleted, or renders no chart any more). */
  forget(instance: InstanceName): void {
    const key = keyOf(instance.namespace, instance.name);
    const render = this.renders.get(key);
    if (render) this.charge(instance.namespace, -render.charged);
    this.renders.delete(key);
    if (render && render.charged > 0) this.withdrawn(instance);
  }

  /** What the renders kept whole set, in all and in `namespace` (for tests and logs). */
  chargedBytes(namespace?: string): number {
    return namespace === undefined ? this.charged : (this.chargedByNamespace.get(namespace) ?? 0);
  }

  private charge(namespace: string, bytes: number): void {
    if (bytes === 0) return;
    this.charged += bytes;
    const left = (this.chargedByNamespace.get(namespace) ?? 0) + bytes;
    if (left > 0) this.chargedByNamespace.set(namespace, left);
    else this.chargedByNamespace.delete(namespace);
  }

  /**
   * Whether the cache keeps whole `object` (objectId `id`), which instance `name` (with `uid`) of `namespace`
   * controls: the instance's render names it, and it is at most {@link keptBytes} of what the render sets.
   */
  keeps(namespace: string, name: string, uid: string, id: string, object: { readonly metadata: object }): boolean {
    const render = this.renders.get(keyOf(namespace, name));
    const rendered = render?.uid === uid ? render.bytes.get(id) : undefined;
    return rendered !== undefined && contentBytes(object) <= keptBytes(rendered);
  }

  /** A copy read live of the object `cached` (an identity), unless the cache has seen a newer version since. */
  copyOf<T extends Identified>(instance: InstanceName, uid: string, cached: Identified): T | undefined {
    const render = this.renders.get(keyOf(instance.namespace, instance.name));
    const copy = render?.uid === uid ? render.copies.get(objectId(cached)) : undefined;
    if (!copy || copy.metadata.uid !== cached.metadata.uid) return undefined;
    return notOlder(copy.metadata.resourceVersion, cached.metadata.resourceVersion) ? (copy as T) : undefined;
  }

  /**
   * Keeps `copy`, read live, for the next reconciles of the instance while the cache keeps an identity of it:
   * only of an object the render names, and no bigger than the cache would keep it.
   */
  remember(instance: InstanceName, uid: string, copy: Identified): void {
    const render = this.renders.get(keyOf(instance.namespace, instance.name));
    const id = objectId(copy);
    const rendered = render?.uid === uid ? render.bytes.get(id) : undefined;
    if (render && rendered !== undefined && contentBytes(copy) <= keptBytes(rendered)) render.copies.set(id, copy);
  }

  /** Drops the copy of `object`: the cache keeps it whole now. */
  dropCopy(instance: InstanceName, object: Identified): void {
    this.renders.get(keyOf(instance.namespace, instance.name))?.copies.delete(objectId(object));
  }
}

function keyOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Whether resourceVersion `a` is `b` or newer (compared as integers, etcd's revisions; else only equal). */
function notOlder(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  if (a === b) return true;
  return /^\d+$/.test(a) && /^\d+$/.test(b) && BigInt(a) > BigInt(b);
}
