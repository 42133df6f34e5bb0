/**
 * Since when each StatefulSet has been missing pods, in this process. A StatefulSet says that it cannot create a
 * pod only in events (`FailedCreate`), and reading them is a list of the namespace's events, which grows with the
 * fleet. A missing pod is usually a moment of a rollout or a start (the controller deleted the old pod and creates
 * the new one on its next sync): those events are read only once pods have been missing for a grace period, so a
 * rollout of a thousand StatefulSets costs no reads and a stuck one is reported a period after it was first seen.
 *
 * Like the status pacer, this is memory of the process only: after a restart the first look simply waits once.
 */

/** First and latest sighting of a StatefulSet's missing pods; one tracker per reconciler. */
export class MissingPodSightings {
  /** StatefulSet uid → sightings, least recently seen first: entries not seen for `forgetAfterMs` are dropped. */
  private readonly sightings = new Map<string, { readonly since: number; readonly seen: number }>();

  private readonly forgetAfterMs: number;

  /**
   * @param forgetAfterMs how long an entry not seen again is kept: longer than the poll of an instance that waits
   * on its pods (which sees them again every poll), so only StatefulSets deleted or fixed meanwhile are forgotten.
   */
  constructor(forgetAfterMs: number) {
    this.forgetAfterMs = forgetAfterMs;
    if (!Number.isFinite(forgetAfterMs) || forgetAfterMs <= 0) {
      throw new Error(`missing pods: forgetAfterMs must be a positive number of ms, got ${forgetAfterMs}`);
    }
  }

  /** How long the StatefulSet `uid` has been missing pods at `atMs` (a monotonicMs reading): 0 when first seen. */
  missingFor(uid: string, atMs: number): number {
    const since = this.sightings.get(uid)?.since ?? atMs;
    this.sightings.delete(uid);
    this.sightings.set(uid, { since, seen: atMs });
    for (const [oldUid, sighting] of this.sightings) {
      if (sighting.seen + this.forgetAfterMs > atMs) break;
      this.sightings.delete(oldUid);
    }
    return atMs - since;
  }

  /** The StatefulSet `uid` has all its pods (or is gone): a later gap starts a new grace period. */
  complete(uid: string): void {
    this.sightings.delete(uid);
  }

  /** How many StatefulSets are remembered (for tests). */
  get size(): number {
    return this.sightings.size;
  }
}
