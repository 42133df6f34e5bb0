/**
 * The latest Warning events about an instance and its children, for error messages: when an instance is not
 * Ready, the cause is often only in an event (a quota, a scheduling failure, an unbound volume claim).
 */
import type { KubeClient, KubeObject } from "../../kube/index.ts";

/** A core/v1 Event, as far as we read it (events.k8s.io/v1 events show up here too, mapped by the apiserver). */
export interface CoreEvent extends KubeObject {
  involvedObject?: { kind?: string; name?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string } | null;
}

/**
 * True for events about the instance or an object the operator named after it: the workload, its ReplicaSets
 * and pods (`name-...`), the Service, and the StatefulSet's volume claims (`data-name-0`).
 */
function concernsInstance(event: CoreEvent, instanceName: string): boolean {
  const name = event.involvedObject?.name ?? "";
  return name === instanceName || name.startsWith(`${instanceName}-`) || name.includes(`-${instanceName}-`);
}

/**
 * The `limit` most recent Warning events about `instanceName`, newest first, one line each; of several events
 * with the same reason about the same object (a ReplicaSet failing to create pod after pod) only the newest.
 */
export function summarizeWarnings(events: readonly CoreEvent[], instanceName: string, limit = 5): string[] {
  const seen = new Set<string>();
  return events
    .filter((event) => event.type === "Warning" && concernsInstance(event, instanceName))
    .map((event) => ({ event, at: Date.parse(lastSeen(event) ?? "") || 0 }))
    .sort((a, b) => b.at - a.at)
    .map(({ event }) => event)
    .filter((event) => {
      const key = `${event.involvedObject?.kind}/${event.involvedObject?.name} ${event.reason}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, limit)
    .map((event) => {
      const count = event.series?.count ?? event.count ?? 1;
      const times = count > 1 ? ` (x${count})` : "";
      const about = `${event.involvedObject?.kind ?? "?"}/${event.involvedObject?.name ?? "?"}`;
      return `Warning ${event.reason ?? ""} ${about}: ${(event.message ?? "").trim()}${times}`;
    });
}

/** Lists the namespace's Warning events and summarizes those about the instance; [] when events cannot be read. */
export async function latestWarnings(client: KubeClient, namespace: string, instanceName: string): Promise<string[]> {
  try {
    const list = await client.list<CoreEvent>("v1", "Event", { namespace, fieldSelector: "type=Warning" });
    return summarizeWarnings(list.items, instanceName);
  } catch {
    // Events only decorate an error message; failing to read them must not replace the real error.
    return [];
  }
}

function lastSeen(event: CoreEvent): string | undefined {
  return (
    event.series?.lastObservedTime ??
    event.lastTimestamp ??
    event.eventTime ??
    event.firstTimestamp ??
    event.metadata.creationTimestamp ??
    undefined
  );
}
