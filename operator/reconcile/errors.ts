/**
 * The two ways a reconcile fails (kopf's habit), so the runtime knows whether retrying can help. The runtime
 * imports these from here: reconcile sits below runtime and may not import it.
 *
 * A kube ConflictError (409) is deliberately left unwrapped: the runtime retries it after a short fixed delay,
 * because the next attempt reads a fresher copy and backoff would only slow convergence.
 */
import { ForbiddenError, isTransient, UnauthorizedError } from "../../kube/index.ts";

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

/**
 * True when `error` (or any error in its `cause` chain) is one a retry can heal without anyone changing the
 * instance: the apiserver unreachable, overloaded or erroring (transport, 429, 5xx), a write conflict, or 401/403
 * (credentials being rotated, RBAC still rolling out). Such a failure makes an instance Stalled while it lasts,
 * never Degraded. Anything else (a rejected request, a bug) is treated as permanent.
 */
export function isTransientFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; depth++) {
    if (isTransient(current) || current instanceof UnauthorizedError || current instanceof ForbiddenError) return true;
    current = current.cause;
  }
  return false;
}
