/**
 * Kubernetes' MicroTime (metav1.MicroTime): RFC 3339 in UTC with exactly six fractional digits. The fields that hold
 * one (a Lease's acquireTime and renewTime, an events.k8s.io Event's eventTime and series.lastObservedTime) are
 * refused by the apiserver with the three digits `Date.toISOString()` writes.
 */

/** `at` (epoch milliseconds or a Date) as a MicroTime, e.g. "2030-01-02T03:04:05.678000Z". */
export function microTime(at: number | Date): string {
  return new Date(at).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
