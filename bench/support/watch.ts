/** Following every change of a kind in a namespace, across server-closed watch requests, with nothing missed. */
import { setTimeout as sleep } from "node:timers/promises";
import { TransportError, type KubeClient, type KubeObject, type WatchEvent } from "../../kube/index.ts";

export interface FollowOptions {
  readonly namespace: string;
  /** Where to start: the resourceVersion of a list made before the changes to observe. */
  readonly resourceVersion: string;
  /** Ends the watch. */
  readonly signal: AbortSignal;
}

/**
 * Calls `onEvent` for every ADDED/MODIFIED/DELETED event from `resourceVersion` on, resuming where it left off when
 * the server ends a request or the connection drops, until `signal` aborts. Resolves then; rejects on anything that
 * would leave a hole in the record (410 Gone, an API error), since a figure from a partial record would be wrong.
 */
export async function follow<T extends KubeObject>(
  client: KubeClient,
  apiVersion: string,
  kind: string,
  options: FollowOptions,
  onEvent: (event: WatchEvent<T>) => void,
): Promise<void> {
  let resourceVersion = options.resourceVersion;
  const { namespace, signal } = options;
  while (!signal.aborted) {
    try {
      for await (const event of client.watch<T>(apiVersion, kind, {
        namespace,
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
        signal,
      })) {
        resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
        if (event.type !== "BOOKMARK") onEvent(event);
      }
    } catch (error) {
      if (signal.aborted) return;
      if (!(error instanceof TransportError)) throw error;
      await sleep(100);
    }
  }
}
