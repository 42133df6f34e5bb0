/**
 * The two ways a reconcile can fail (kopf's habit), so the runtime knows whether retrying can help:
 * - PermanentError: retrying cannot help until the object changes. The reconciler has reported it on the
 *   object's status; the runtime forgets the key (no backoff retry) and waits for a change event or the resync.
 * - TransientError, and any other error: retry with per-key exponential backoff up to maxConsecutiveFailures
 *   times, then in the slow lane (every few minutes) until it succeeds; never parked.
 * A kube ConflictError (409) is retried after a short fixed delay instead.
 *
 * The classes live in operator/reconcile (which may not import the runtime); they are re-exported here so the
 * runtime and its users have one class each to test with `instanceof`.
 */
export { PermanentError, TransientError } from "../reconcile/errors.ts";
