/**
 * The error kinds a reconcile throws are the runtime's (operator/runtime/errors.ts), as a Go reconciler uses
 * controller-runtime's TerminalError. A kube ConflictError (409) is deliberately left unwrapped: the runtime
 * retries it after a short fixed delay, because the next attempt reads a fresher copy.
 */
import { ForbiddenError, isTransient, UnauthorizedError } from "../../kube/index.ts";

export { PermanentError, TransientError } from "../runtime/errors.ts";

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
