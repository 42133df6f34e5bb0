/**
 * The error kinds a reconcile throws are the runtime's (operator/runtime/errors.ts), as a Go reconciler uses
 * controller-runtime's TerminalError. A kube ConflictError (409) is deliberately left unwrapped: the runtime
 * retries it after a short fixed delay, because the next attempt reads a fresher copy.
 */
export { PermanentError, TransientError } from "../runtime/errors.ts";
