/**
 * The two ways a reconcile fails (kopf's habit), so the runtime knows whether retrying can help. The runtime
 * imports these from here: reconcile sits below runtime and may not import it.
 *
 * A kube ConflictError (409) is deliberately left unwrapped: the runtime retries it after a short fixed delay,
 * because the next attempt reads a fresher copy and backoff would only slow convergence.
 */

/**
 * Retrying cannot help until the object changes: an invalid or impossible spec, a child the apiserver rejects,
 * a name taken by another controller's object. The reconciler has already reported it on the instance
 * (Degraded=True and Stalled=True with `reason`); the runtime stops retrying the key and waits for a change.
 */
export class PermanentError extends Error {
  /** The CamelCase reason written to the Degraded condition, e.g. `ChildRejected`. */
  readonly reason: string;

  constructor(message: string, options?: ErrorOptions & { reason?: string }) {
    super(message, options);
    this.name = "PermanentError";
    this.reason = options?.reason ?? "ReconcileFailed";
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
