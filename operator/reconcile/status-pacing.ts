/**
 * Pacing of status writes that only report progress. While an instance works towards its spec (a rollout, pods
 * starting), its workload's counts move several times within a second or two: a new ReplicaSet counted, its pod
 * ready, the old pod gone. Each move would be a status write (and a watch event to every client) that the next one
 * supersedes within milliseconds. A status whose news is only counts and the messages that quote them is written
 * at most once per interval per instance; a change of phase, image, generation or of any condition's status or
 * reason is written at once, and so is every status with Ready=True (the end of a rollout is never delayed). A
 * skipped write is not lost: the reconcile asks to look again when the interval has passed, and writes the counts
 * as they are then, so a slow or stuck rollout still shows where it stands within the interval.
 *
 * The interval stretches with the fleet: when many instances are at work at once (a fleet rolled to a new image),
 * their progress writes together stay within a budget per second, so each instance's interval is the number at
 * work divided by that budget, never less than the base interval. Progress is the one kind of write that can wait;
 * an apiserver busy with a fleet's rollout is where waiting pays.
 *
 * The pacer remembers when it last wrote each instance's status, in this process only: after a restart (or on
 * another replica after a failover) the first write is simply not delayed.
 */
import { Ready, type Condition, type MyAppInstanceStatus } from "../../api/index.ts";
import { jsonEqual } from "../desired/index.ts";

/** How long an instance whose last status said it was still at work counts as at work without a new write. */
const workingHorizonMs = 5 * 60_000;

/** When the status of each instance was last written, to pace progress-only writes; one per reconciler. */
export class StatusPacer {
  /** Key → the last write, oldest first: only entries younger than the interval are kept. */
  private readonly lastWrites = new Map<string, LastWrite>();
  /** Key → when its last write said it was still at work (not Ready), oldest first, for the fleet's budget. */
  private readonly working = new Map<string, number>();

  /** The least time between two progress-only status writes of one instance (ms). */
  readonly baseIntervalMs: number;
  /** The progress-only writes per second all instances at work may make together, on average. */
  readonly fleetWritesPerSecond: number;

  constructor(baseIntervalMs: number, { fleetWritesPerSecond = Infinity }: { fleetWritesPerSecond?: number } = {}) {
    if (!Number.isFinite(baseIntervalMs) || baseIntervalMs < 0) {
      throw new Error(`status progress interval must be a non-negative number of ms, got ${baseIntervalMs}`);
    }
    if (!(fleetWritesPerSecond > 0)) {
      throw new Error(
        `status progress budget must be a positive number of writes per second, got ${fleetWritesPerSecond}`,
      );
    }
    this.baseIntervalMs = baseIntervalMs;
    this.fleetWritesPerSecond = fleetWritesPerSecond;
  }

  /** The least time between two progress-only writes of one instance now: the base, or the fleet's share. */
  get intervalMs(): number {
    return Math.max(this.baseIntervalMs, (this.working.size * 1000) / this.fleetWritesPerSecond);
  }

  /** How long a progress-only write of `key` must still wait at `atMs` (a monotonicMs reading); 0 when it may go. */
  waitFor(key: string, atMs: number): number {
    const last = this.lastWrites.get(key);
    return last === undefined ? 0 : Math.max(0, last.at + this.intervalMs - atMs);
  }

  /**
   * The status this pacer last wrote for `key`, when the instance read now is still the version that write was
   * made over (`readVersion`, its resourceVersion): the cache has not yet delivered the write, and the status it
   * shows is older than the one the apiserver holds. A reconcile woken meanwhile (the Deployment it just changed)
   * starts from the written status, so it neither writes the same status again nor takes it for news.
   */
  writtenOver(key: string, readVersion: string | undefined): MyAppInstanceStatus | undefined {
    const last = this.lastWrites.get(key);
    return readVersion !== undefined && last?.readVersion === readVersion ? last.status : undefined;
  }

  /**
   * Records that `status` was written for `key` at `atMs` (a monotonicMs reading) over the instance version
   * `readVersion`, and forgets writes older than the interval (they delay nothing, and a cache is not that far
   * behind).
   */
  wrote(key: string, atMs: number, status: MyAppInstanceStatus, readVersion: string | undefined): void {
    this.lastWrites.delete(key);
    this.lastWrites.set(key, { at: atMs, status, readVersion });
    this.working.delete(key);
    if (status.conditions?.find((c) => c.type === Ready)?.status !== "True") this.working.set(key, atMs);
    for (const [oldKey, since] of this.working) {
      if (since + workingHorizonMs > atMs) break;
      this.working.delete(oldKey);
    }
    const intervalMs = this.intervalMs;
    for (const [oldKey, last] of this.lastWrites) {
      if (last.at + intervalMs > atMs) break;
      this.lastWrites.delete(oldKey);
    }
  }

  /** Forgets `key` (its instance is gone): it no longer delays anything nor counts as at work. */
  forget(key: string): void {
    this.lastWrites.delete(key);
    this.working.delete(key);
  }

  /** Instances whose last write is still remembered (for tests: the memory stays bounded). */
  get size(): number {
    return this.lastWrites.size;
  }

  /** Instances whose last write said they were still at work, within the horizon (they share the budget). */
  get workingCount(): number {
    return this.working.size;
  }
}

interface LastWrite {
  readonly at: number;
  readonly status: MyAppInstanceStatus;
  readonly readVersion: string | undefined;
}

/**
 * True when `next` differs from `previous` only in progress (replicas, readyReplicas, the message and condition
 * messages that quote them, a condition's lastTransitionTime cannot move without its status), and is not Ready:
 * such a write may wait. Anything a client waits on or reacts to (phase, image, observedGeneration, the answered
 * reconcile request, a condition's status, reason or generation) makes it news.
 */
export function progressOnly(previous: MyAppInstanceStatus | undefined, next: MyAppInstanceStatus): boolean {
  if (previous === undefined) return false;
  if (next.conditions?.find((c) => c.type === Ready)?.status === "True") return false;
  const withoutProgress = ({
    replicas: _replicas,
    readyReplicas: _ready,
    message: _message,
    conditions,
    ...rest
  }: MyAppInstanceStatus) => ({ ...rest, conditions: (conditions ?? []).map(conditionState) });
  return jsonEqual(withoutProgress(previous), withoutProgress(next));
}

/** A condition without its message: what it says, not how far it has come. */
function conditionState({ message: _message, ...state }: Condition): Omit<Condition, "message"> {
  return state;
}
