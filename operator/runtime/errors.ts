/**
 * The ways a reconcile may fail, so the runtime knows whether retrying can help. They belong to the runtime, as
 * controller-runtime's TerminalError does: a reconciler imports them from here (and nothing else of the runtime
 * but its Reconciler contract), the runtime never imports a reconciler.
 * - PermanentError: retrying cannot help until the object changes. The reconciler has reported it on the
 *   object's status; the runtime forgets the key (no backoff retry) and waits for a change event or the resync.
 *   One whose cause lies outside the spec (`outsideSpec`: a name another object holds, the cluster's admission
 *   refusing a child) is looked at again in the slow lane, since that cause may go without the object changing.
 * - TransientError, and any other error: retry with per-key exponential backoff up to maxConsecutiveFailures
 *   times, then in the slow lane (every few minutes) until it succeeds; never parked.
 * A kube ConflictError (409: a cached copy was stale) is retried after a short fixed delay instead.
 */
/**
 * Retrying cannot help until the object changes: an invalid or impossible spec, a child the apiserver rejects,
 * a name taken by another controller's object. The reconciler has already reported it on the object; the runtime
 * stops retrying the key and waits for a change.
 */
export class PermanentError extends Error {
  /** The CamelCase reason the reconciler reported, e.g. `ChildRejected`. */
  readonly reason: string;
  /**
   * The cause is in the cluster, not in the spec: an object of someone else's holding a child's name, an admission
   * policy, webhook or quota refusing a child. Someone may remove it by hand, and the operator would see no event
   * for it (it caches only its own objects), so the runtime looks at the key again in the slow lane.
   */
  readonly outsideSpec: boolean;

  constructor(message: string, options?: ErrorOptions & { reason?: string; outsideSpec?: boolean }) {
    super(message, options);
    this.name = "PermanentError";
    this.reason = options?.reason ?? "ReconcileFailed";
    this.outsideSpec = options?.outsideSpec ?? false;
  }
}

/**
 * Worth retrying with backoff: the apiserver is unavailable or throttling, a request timed out, RBAC does not
 * allow a call yet. `cause` keeps the original error for the logs.
 */
export class TransientError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TransientError";
  }
}
