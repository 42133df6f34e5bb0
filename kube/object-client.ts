/**
 * The object calls one reconcile makes, as controller-runtime's client.Client (its Reader and Writer): find, list,
 * server-side apply, create, JSON patch, delete. An interface only: the operator's `ClusterClient`
 * (operator/reconcile/cluster-client.ts) implements it over a KubeClient and the informers' cache, and both the
 * reconcile steps and the chart wing (operator/chart/) take it, so the wing needs nothing of reconcile's.
 */
import type { KubeObject } from "./client.ts";

/** What server-side apply needs to address an object; the rest of the configuration is the fields we own. */
export interface ApplyConfiguration {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    /** A precondition: the write fails with 409 unless the object is still at this version. */
    readonly resourceVersion?: string;
  };
}

/** One RFC 6902 operation. */
export interface JsonPatchOperation {
  readonly op: "test" | "add" | "replace" | "remove";
  readonly path: string;
  readonly value?: unknown;
}

export interface DeleteOptions {
  readonly propagationPolicy: "Background" | "Foreground" | "Orphan";
  /** Delete only the object with this uid, never a namesake created since it was read. */
  readonly preconditionUid?: string;
}

export interface ObjectClient {
  /**
   * The object, or undefined when it does not exist: from a cache when the implementation has one that covers the
   * kind (unless `live`), so possibly a little behind; a write that depends on the copy carries its
   * resourceVersion (409 when stale).
   */
  find<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    options?: { readonly live?: boolean },
  ): Promise<T | undefined>;
  /** Objects of a kind in a namespace that match a label selector (`k=v,k2=v2`) and, if given, a field selector. */
  list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    labelSelector: string,
    fieldSelector?: string,
  ): Promise<T[]>;
  /** Server-side apply with the caller's field manager, forcing ownership of the fields it sets. */
  apply<T extends KubeObject>(object: ApplyConfiguration): Promise<T>;
  /**
   * Creates (POST) with the caller's field manager: ConflictError (409 AlreadyExists) when the name is taken,
   * so an existing object is never overwritten.
   */
  create<T extends KubeObject>(object: ApplyConfiguration): Promise<T>;
  /**
   * JSON patch (RFC 6902). A failed `test` operation, or a path that does not exist, is an InvalidError (422)
   * and changes nothing: a conditional write that needs no read.
   */
  jsonPatch<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string,
    operations: readonly JsonPatchOperation[],
  ): Promise<T>;
  /** Deletes; resolves false when the object was already gone. */
  delete(apiVersion: string, kind: string, name: string, namespace: string, options: DeleteOptions): Promise<boolean>;
}
