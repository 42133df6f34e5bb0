/**
 * The value an apply puts in the reconcile-request annotation, which the operator answers in
 * `status.lastHandledReconcileAt`: the wall-clock time, as Flux's `requestedAt` is by convention (a person reading
 * it sees when it was asked), plus a random suffix, so two requests never share a value, whatever the clocks do: a
 * repeated value would change nothing in the object, and the wait would take the previous answer for this one.
 */
import { randomBytes } from "node:crypto";
import { realClock, type Clock } from "../kube/clock.ts";

/** `2026-12-01T17:13:00.123Z-1a2b3c4d`. */
export function newReconcileRequest(clock: Clock = realClock): string {
  return `${new Date(clock.wallTimeMs()).toISOString()}-${randomBytes(4).toString("hex")}`;
}
