/** The {@link ObjectWatchClient} of one MyAppInstance, on a KubeClient: a list and a watch by field selector. */
import { apiVersion, kind } from "../../api/index.ts";
import type { KubeClient } from "../../kube/index.ts";
import type { ObjectWatchClient } from "./follow.ts";
import type { LiveInstance } from "../manifest.ts";

// Watches end after this long and are resumed: bounds how long a silently dead connection can go unnoticed.
const watchTimeoutSeconds = 120;

/** Reads and watches exactly `namespace/name` (fieldSelector metadata.name), with bookmarks. */
export function instanceWatchClient(
  client: KubeClient,
  namespace: string,
  name: string,
): ObjectWatchClient<LiveInstance> {
  const fieldSelector = `metadata.name=${name}`;
  return {
    async snapshot() {
      const list = await client.list<LiveInstance>(apiVersion, kind, { namespace, fieldSelector });
      return { object: list.items[0], resourceVersion: list.metadata.resourceVersion ?? "" };
    },
    watch(resourceVersion, signal) {
      return client.watch<LiveInstance>(apiVersion, kind, {
        namespace,
        fieldSelector,
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: watchTimeoutSeconds,
        signal,
      });
    },
  };
}
