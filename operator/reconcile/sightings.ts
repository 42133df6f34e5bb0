/**
 * Since when a passing state has been seen, per object, in this process: a grace period before it counts. Two
 * states are a moment in the life of a workload far more often than a problem, and reporting them at once costs:
 * - a StatefulSet missing pods (usually a moment of a rollout or a start: the controller deleted the old pod and
 *   creates the new one on its next sync). It says it cannot create a pod only in events (`FailedCreate`), and
 *   reading them is a list of the namespace's events, which grows with the fleet: they are read only once pods
 *   have been missing for a grace period, so a rollout of a thousand StatefulSets costs no reads and a stuck one is
 *   reported a period after it was first seen (children.ts);
 * - a workload generation its controller has not seen yet, on an instance that is Ready at its spec and that this
 *   reconcile did not write (status-report.ts): Kubernetes counts a new annotation on a Deployment as a new
 *   generation, so anyone annotating the instance's Deployment made it report Progressing for the moment the
 *   controller took, then Ready again, two status writes and a Ready flip per touch.
 *
 * Like the status pacer, this is memory of the process only: after a restart the first look simply waits once.
 */

/** First and latest sighting of a state per object (its key: a uid, or a uid and generation); one tracker per use. */
export class Sightings {
  /** Key → sightings, least recently seen first: entries not seen for `forgetAfterMs` are dropped. */
  private readonly sightings = new Map<string, { readonly since: number; readonly seen: number }>();

  private readonly forgetAfterMs: number;

  /**
   * @param forgetAfterMs how long an entry not seen again is kept: longer than the poll of an instance that waits
   * on it (which sees it again every poll), so only objects deleted or fixed meanwhile are forgotten.
   */
  constructor(forgetAfterMs: number) {
    this.forgetAfterMs = forgetAfterMs;
    if (!Number.isFinite(forgetAfterMs) || forgetAfterMs <= 0) {
      throw new Error(`sightings: forgetAfterMs must be a positive number of ms, got ${forgetAfterMs}`);
    }
  }

  /** How long the state of `key` has been seen at `atMs` (a monotonicMs reading): 0 when first seen. */
  seenFor(key: string, atMs: number): number {
    const since = this.sightings.get(key)?.since ?? atMs;
    this.sightings.delete(key);
    this.sightings.set(key, { since, seen: atMs });
    for (const [oldKey, sighting] of this.sightings) {
      if (sighting.seen + this.forgetAfterMs > atMs) break;
      this.sightings.delete(oldKey);
    }
    return atMs - since;
  }

  /** The state of `key` has passed (or its object is gone): a later sighting starts a new grace period. */
  passed(key: string): void {
    this.sightings.delete(key);
  }

  /** How many objects are remembered (for tests). */
  get size(): number {
    return this.sightings.size;
  }
}
