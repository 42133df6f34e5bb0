/**
 * Follows one object through a watch until a decision is reached or a deadline passes: the engine under both
 * waits of the provider (Ready after apply, gone after delete). It reacts to each change as it happens instead of
 * polling; it resumes a watch the server ended, relists after 410 Gone, and retries transient errors with backoff.
 */
import { GoneError, isTransient, type KubeObject, type WatchEvent } from "../../kube/index.ts";
import { deadlineSignal, sleep, type Clock } from "../../kube/clock.ts";

/** The object as it stands, from a list (so its absence still comes with a resourceVersion to watch from). */
export interface Snapshot<T> {
  readonly object: T | undefined;
  readonly resourceVersion: string;
}

/** The narrow view of the apiserver a wait needs; one object, fixed by namespace and name. */
export interface ObjectWatchClient<T extends KubeObject> {
  snapshot(): Promise<Snapshot<T>>;
  /** Changes after `resourceVersion` until the server ends the stream or `signal` aborts. */
  watch(resourceVersion: string, signal: AbortSignal): AsyncIterable<WatchEvent<T>>;
}

/** `decided` with the decision, or the last state seen when the deadline passed first. */
export type FollowResult<T, R> =
  { readonly decided: true; readonly value: R } | { readonly decided: false; readonly last: T | undefined };

export interface FollowOptions {
  readonly clock: Clock;
  /** A `clock.monotonicMs()` value. */
  readonly deadline: number;
  /** Stops following early, as the deadline does: the engine cancelled the operation (Ctrl-C). */
  readonly signal?: AbortSignal;
}

// A watch that ends without events this quickly is not waiting on anything: pause before the next, no hot loop.
const minWatchMs = 1_000;
const maxRetryDelayMs = 10_000;

/**
 * Calls `decide` with the object (undefined once it is gone) first as `initial`, then after every change, until
 * it returns something other than undefined. Errors that are not transient propagate.
 */
export async function followObject<T extends KubeObject, R>(
  watched: ObjectWatchClient<T>,
  initial: Snapshot<T>,
  decide: (object: T | undefined) => R | undefined,
  options: FollowOptions,
): Promise<FollowResult<T, R>> {
  const { clock } = options;
  let current = initial.object;
  let resourceVersion: string | undefined = initial.resourceVersion;
  let retries = 0;

  const first = decide(current);
  if (first !== undefined) return { decided: true, value: first };

  const timer = deadlineSignal(clock, options.deadline);
  const dispose = timer.dispose;
  const signal = options.signal ? AbortSignal.any([timer.signal, options.signal]) : timer.signal;
  try {
    while (!signal.aborted) {
      const started = clock.monotonicMs();
      let events = 0;
      try {
        if (resourceVersion === undefined) {
          const fresh = await watched.snapshot();
          current = fresh.object;
          resourceVersion = fresh.resourceVersion;
          const value = decide(current);
          if (value !== undefined) return { decided: true, value };
        }
        for await (const event of watched.watch(resourceVersion, signal)) {
          events++;
          retries = 0;
          resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
          if (event.type === "BOOKMARK") continue;
          current = event.type === "DELETED" ? undefined : event.object;
          const value = decide(current);
          if (value !== undefined) return { decided: true, value };
        }
      } catch (error) {
        if (signal.aborted) break;
        // Our resourceVersion is too old to watch from: read the object afresh, then watch from there.
        if (error instanceof GoneError) {
          resourceVersion = undefined;
          continue;
        }
        if (!isTransient(error)) throw error;
        retries++;
        await sleep(clock, Math.min(maxRetryDelayMs, 500 * 2 ** retries), signal);
        // Changes may have happened while the connection was down: start again from a fresh read.
        resourceVersion = undefined;
        continue;
      }
      if (events === 0 && clock.monotonicMs() - started < minWatchMs) await sleep(clock, minWatchMs, signal);
    }
  } finally {
    dispose();
  }
  return { decided: false, last: current };
}
