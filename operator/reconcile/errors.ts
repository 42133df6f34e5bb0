/**
 * The error kinds a reconcile throws are the runtime's (operator/runtime/errors.ts), as a Go reconciler uses
 * controller-runtime's TerminalError. A kube ConflictError (409) is deliberately left unwrapped: the runtime
 * retries it after a short fixed delay, because the next attempt reads a fresher copy.
 */
import {
  AdmissionDeniedError,
  ForbiddenError,
  InvalidError,
  isTransient,
  UnauthorizedError,
  type ApiError,
} from "../../kube/index.ts";

export { PermanentError, TransientError } from "../runtime/errors.ts";

/**
 * True when `error` (or any error in its `cause` chain) is one a retry can heal without anyone changing the
 * instance: the apiserver unreachable, overloaded or erroring (transport, 429, 5xx), a write conflict, 401 and
 * authorization's 403 (credentials being rotated, RBAC still rolling out), or an error that calls itself transient
 * (a chart source that is down or slow). Such a failure makes an instance Stalled while it lasts, never Degraded.
 * Anything else (a rejected request, admission's 403 included: {@link childRejection}; a bug) is permanent.
 */
export function isTransientFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; depth++) {
    if (childRejection(current)) return false;
    if (isTransient(current) || current instanceof UnauthorizedError || current instanceof ForbiddenError) return true;
    // An error from outside the cluster that says so itself: a chart source down or slow (ChartFetchError), a
    // render over its wall time on a busy node (ChartRenderError).
    if ((current as { transient?: unknown }).transient === true) return true;
    current = current.cause;
  }
  return false;
}

/**
 * The apiserver's refusal of an object the operator wrote, which only a change of the instance (or of the
 * cluster's policy) can lift: 400/422 (schema, immutable fields, a second controller) or admission's 403 (a
 * ValidatingAdmissionPolicy, a webhook, PodSecurity, a ResourceQuota). The one place a reconcile decides that a
 * failed write is `ChildRejected`; authorization's 403 is not one (kube/errors.ts tells the two 403s apart).
 */
export function childRejection(error: unknown): ApiError | undefined {
  return error instanceof InvalidError || error instanceof AdmissionDeniedError ? error : undefined;
}
